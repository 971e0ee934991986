package io.rnbd.nbd.gateway.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UnixSendBufferTest {
    @TempDir
    Path dir;

    private Optional<String> hintFor(String content) throws IOException {
        Path f = dir.resolve("wmem_default");
        Files.writeString(f, content);
        return UnixSendBuffer.hint(f);
    }

    @Test
    void theKernelsDefaultGetsTheTuningHint() throws IOException {
        String hint = hintFor("212992\n").orElseThrow();
        assertTrue(hint.contains("net.core.wmem_default is 212992 bytes"), hint);
        assertTrue(hint.contains("fix: sysctl -w net.core.wmem_default=4194304"), hint);
        assertFalse(hint.contains("\n"), "one log line");
    }

    @Test
    void aRaisedDefaultGetsNone() throws IOException {
        assertEquals(Optional.empty(), hintFor("4194304\n"));
        assertEquals(Optional.empty(), hintFor("1048576"));
        assertTrue(hintFor("1048575").isPresent());
    }

    @Test
    void anUnreadableOrOddFileGetsNone() throws IOException {
        assertEquals(Optional.empty(), hintFor("lots\n"));
        assertEquals(Optional.empty(), hintFor(""));
        assertEquals(Optional.empty(), UnixSendBuffer.hint(dir.resolve("missing")));
    }

    /** The real sysctl, as cat reads it: a sysctl answers EOF to a read past offset 0. */
    @Test
    void theHostsSysctlReadsWhole() throws Exception {
        assumeTrue(Files.isReadable(UnixSendBuffer.WMEM_DEFAULT), "no " + UnixSendBuffer.WMEM_DEFAULT + " (not Linux)");
        Process cat = new ProcessBuilder("cat", UnixSendBuffer.WMEM_DEFAULT.toString()).start();
        String text = new String(cat.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
        assertTrue(cat.waitFor(10, TimeUnit.SECONDS) && cat.exitValue() == 0, "cat failed");
        assertEquals(OptionalLong.of(Long.parseLong(text)), UnixSendBuffer.read(UnixSendBuffer.WMEM_DEFAULT));
    }
}

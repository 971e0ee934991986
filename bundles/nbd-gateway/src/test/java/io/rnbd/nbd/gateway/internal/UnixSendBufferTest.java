package io.rnbd.nbd.gateway.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
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
        assertTrue(hint.contains("212992-byte"), hint);
        assertTrue(hint.contains("net.core.wmem_default = 4194304"), hint);
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
}

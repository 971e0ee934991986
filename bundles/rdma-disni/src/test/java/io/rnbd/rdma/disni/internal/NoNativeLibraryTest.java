package io.rnbd.rdma.disni.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real provider in a JVM whose java.library.path has no libdisni.so, with an adapter
 * present in (fake) sysfs: it must stay dormant, say why, and never throw. A child JVM,
 * because DiSNI's library load happens once per JVM and this one may have it.
 */
class NoNativeLibraryTest {
    @TempDir
    Path tmp;

    @Test
    void providerStaysDormantAndSaysTheLibraryIsMissing() throws Exception {
        Path sysfs = tmp.resolve("infiniband");
        SysfsScannerTest.roce(sysfs, "rxe0", "4: ACTIVE", "0000:0000:0000:0000:0000:ffff:c000:0201", "dummy0");
        Path emptyLibDir = Files.createDirectories(tmp.resolve("lib"));
        String out = run(List.of("-Djava.library.path=" + emptyLibDir, DormancyProbe.class.getName(), sysfs.toString()));
        assertFalse(out.contains("REGISTERED"), out);
        assertTrue(out.contains("STATUS dormant: native library libdisni.so not found in java.library.path ("
                + emptyLibDir + "); copy it to $KARAF_HOME/lib"), out);
        assertFalse(out.contains("Exception"), "no stack traces: " + out);
        assertEquals(1, count(out, "WARN"), "the reason is logged once over two scans: " + out);
    }

    @Test
    void withoutAdapterTheNativeLibraryIsNotEvenLoaded() throws Exception {
        Path sysfs = Files.createDirectories(tmp.resolve("empty"));
        String out = run(List.of("-Djava.library.path=" + tmp, DormancyProbe.class.getName(), sysfs.toString()));
        assertTrue(out.contains("STATUS dormant: no RDMA adapter under " + sysfs), out);
        assertFalse(out.contains("libdisni"), out);
    }

    private static int count(String s, String what) {
        int n = 0;
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }

    private static String run(List<String> args) throws IOException, InterruptedException {
        List<String> cmd = new java.util.ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path")));
        cmd.addAll(args);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "probe JVM finished");
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
}

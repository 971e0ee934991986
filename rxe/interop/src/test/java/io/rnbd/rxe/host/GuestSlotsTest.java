package io.rnbd.rxe.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How many guests run-kernel-matrix.sh boots at once (rxe/lib/guest-slots.sh), on canned
 * /proc/meminfo readings: what was asked while memory holds it, fewer when it does not, never
 * none, and bad input refused with a message rather than a guess.
 */
class GuestSlotsTest {
    private static final Path LIB = Path.of(System.getProperty("rxe.lib", "../lib")).toAbsolutePath().normalize();

    @TempDir
    Path tmp;

    @Test
    void threeGuestsOfFourGibOnAMachineWithTwentyTwoAvailable() throws Exception {
        Run r = slots("3", "4G", meminfo(22 * 1024 * 1024));
        assertEquals(0, r.rc);
        assertEquals("3", r.out);
        assertEquals("", r.err, "nothing to say when what was asked fits");
    }

    @Test
    void aMachineThatHoldsTwoGetsTwoAndSaysWhy() throws Exception {
        Run r = slots("3", "4G", meminfo(11 * 1024 * 1024));
        assertEquals(0, r.rc);
        assertEquals("2", r.out);
        assertTrue(r.err.contains("2 guest(s) at once, not 3") && r.err.contains("11264 MiB available"), r.err);
    }

    @Test
    void unitsAsQemuReadsThem() throws Exception {
        Path m = meminfo(8 * 1024 * 1024);
        assertEquals("2", slots("4", "4096M", m).out);
        assertEquals("2", slots("4", "4096", m).out, "a bare number is MiB, as for -m");
        assertEquals("4", slots("4", "2g", m).out);
    }

    @Test
    void neverFewerThanOne() throws Exception {
        Run r = slots("2", "4G", meminfo(1024 * 1024));
        assertEquals(0, r.rc);
        assertEquals("1", r.out);
    }

    @Test
    void noReadingBootsWhatWasAsked() throws Exception {
        Path m = tmp.resolve("meminfo-old");
        Files.writeString(m, "MemTotal:       16384000 kB\nMemFree:         1000000 kB\n");
        Run r = slots("3", "4G", m);
        assertEquals(0, r.rc);
        assertEquals("3", r.out);
        assertTrue(r.err.contains("no MemAvailable"), r.err);
    }

    @Test
    void badInputIsRefusedWithAMessage() throws Exception {
        Path m = meminfo(22 * 1024 * 1024);
        for (String[] bad : new String[][] {{"0", "4G"}, {"x", "4G"}, {"", "4G"}, {"3", "lots"}, {"3", "0G"}, {"3", "G"}}) {
            Run r = slots(bad[0], bad[1], m);
            assertEquals(2, r.rc, String.join(" ", bad) + ": " + r.out + r.err);
            assertEquals("", r.out);
            assertTrue(r.err.startsWith("guest-slots: "), r.err);
        }
    }

    private Path meminfo(long availableKb) throws IOException {
        Path m = tmp.resolve("meminfo-" + availableKb);
        Files.writeString(m, "MemTotal:       24000000 kB\nMemFree:        20000000 kB\n"
                + "MemAvailable:   " + availableKb + " kB\nBuffers:          100000 kB\n");
        return m;
    }

    private record Run(int rc, String out, String err) {}

    private Run slots(String requested, String mem, Path meminfo) throws Exception {
        Process p = new ProcessBuilder("bash", LIB.resolve("guest-slots.sh").toString(), requested, mem, meminfo.toString())
                .start();
        p.getOutputStream().close();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "guest-slots.sh returned");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        return new Run(p.exitValue(), out, err);
    }
}

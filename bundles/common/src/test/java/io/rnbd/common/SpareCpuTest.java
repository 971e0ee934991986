package io.rnbd.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

class SpareCpuTest {
    @TempDir
    Path dir;

    private static int runnable(String text) {
        byte[] b = text.getBytes(StandardCharsets.US_ASCII);
        return SpareCpu.runnable(ByteBuffer.wrap(b), b.length);
    }

    @Test
    void readsTheRunnableCountFromLoadavg() {
        assertEquals(3, runnable("0.52 0.58 0.59 3/467 12345\n"));
        assertEquals(12, runnable("10.00 9.50 8.25 12/1024 99\n"));
        assertEquals(1, runnable("0.00 0.00 0.00 1/80 7"));
    }

    @Test
    void malformedTextGivesNoCount() {
        for (String bad : new String[] {"", "0.5 0.5 0.5", "0.5 0.5 0.5 ", "0.5 0.5 0.5 /80 1",
                "0.5 0.5 0.5 x/80 1", "0.5 0.5 0.5 3", "0.5 0.5 0.5 99999999999/1 1", "garbage"}) {
            assertEquals(-1, runnable(bad), bad);
        }
    }

    @Test
    void spareWhileNoMoreTasksRunThanCpus() throws Exception {
        assertTrue(probe("0.10 0.10 0.10 2/90 1\n", 2).available(), "2 runnable on 2 CPUs, the caller among them");
        assertFalse(probe("1.90 1.80 1.70 3/90 1\n", 2).available(), "3 runnable on 2 CPUs: one waits");
        assertTrue(probe("0.10 0.10 0.10 1/90 1\n", 1).available());
    }

    @Test
    void rereadsTheFileEachTime() throws Exception {
        Path f = dir.resolve("loadavg");
        Files.writeString(f, "0 0 0 1/90 1\n");
        try (SpareCpu p = new SpareCpu(f, 1)) {
            assertTrue(p.available());
            Files.writeString(f, "0 0 0 4/90 1\n");
            assertFalse(p.available());
        }
    }

    /**
     * The probes of one process share a reading for {@link SpareCpu#SHARED_READING_NANOS}: the
     * second asks within it and gets the first's answer without reading the file (which now says
     * the host is busy); once it is older, the next question reads the file again.
     */
    @Test
    void theProbesOfAProcessShareOneReadingWhileItIsYoung() throws Exception {
        Path f = dir.resolve("loadavg");
        Files.writeString(f, "0 0 0 1/90 1\n");
        AtomicLong now = new AtomicLong(5_000_000_000L);
        SpareCpu.Share share = new SpareCpu.Share();
        long young = SpareCpu.SHARED_READING_NANOS;
        try (SpareCpu gatewayReader = new SpareCpu(f, 2, share, 1, young, now::get);
                SpareCpu deviceThread = new SpareCpu(f, 2, share, 1, young, now::get)) {
            assertTrue(gatewayReader.available());
            Files.writeString(f, "0 0 0 5/90 1\n");
            now.addAndGet(young - 1);
            assertTrue(deviceThread.available(), "the reader's reading, still young, serves the device's thread");
            now.addAndGet(1);
            assertFalse(deviceThread.available(), "an old reading is read afresh");
            Files.writeString(f, "0 0 0 1/90 1\n");
            now.addAndGet(young / 2);
            assertFalse(gatewayReader.available(), "the device thread's fresh reading serves the reader");
        }
    }

    @Test
    void withoutTheFileACpuCountsAsSpare() {
        try (SpareCpu p = new SpareCpu(dir.resolve("missing"), 1)) {
            assertFalse(p.probing());
            assertTrue(p.available(), "polling then behaves as configured");
        }
    }

    @Test
    void unreadableTextCountsAsSpare() throws Exception {
        assertTrue(probe("not a loadavg line", 1).available());
    }

    @Test
    void closeReleasesTheDescriptor() throws Exception {
        SpareCpu p = probe("0 0 0 1/90 1\n", 1);
        assertTrue(p.isOpen());
        p.close();
        assertFalse(p.isOpen());
        assertTrue(p.available(), "a closed probe must not throw");
    }

    private SpareCpu probe(String text, int cpus) throws Exception {
        Path f = Files.createTempFile(dir, "loadavg", "");
        Files.writeString(f, text);
        return new SpareCpu(f, cpus);
    }
}

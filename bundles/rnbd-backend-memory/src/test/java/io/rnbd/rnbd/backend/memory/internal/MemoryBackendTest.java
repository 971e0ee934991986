package io.rnbd.rnbd.backend.memory.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockRequests;
import io.rnbd.rnbd.api.Capabilities;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class MemoryBackendTest {
    private static final int PAGE = MemoryBlockDevice.PAGE;
    private final MemoryBackend backend = new MemoryBackend();

    @AfterEach
    void close() {
        backend.close();
    }

    private MemoryBlockDevice open(String size) throws IOException {
        return (MemoryBlockDevice) backend.open(Map.of("size", size), false);
    }

    @Test
    void sizeTakesBinarySuffixes() throws IOException {
        assertEquals(512, open("512").size());
        assertEquals(64 << 10, open("64k").size());
        assertEquals(1 << 20, open("1M").size());
        assertEquals(1L << 30, open("1g").size());
        assertEquals(1L << 40, open("1t").size());
        assertEquals(1L << 40, open(" 1TB ").size());
    }

    @Test
    void badParametersFailWithOneLineReasons() {
        assertMessage("parameter 'size' is required", Map.of());
        assertMessage("is not a size", Map.of("size", "lots"));
        assertMessage("is not a size", Map.of("size", "1x"));
        assertMessage("must be a positive multiple of 512", Map.of("size", "0"));
        assertMessage("must be a positive multiple of 512", Map.of("size", "1000"));
        assertMessage("is out of range", Map.of("size", "-1"));
        assertMessage("is out of range", Map.of("size", "99999999999t"));
        assertMessage("exceeds the limit", Map.of("size", "65t"));
        assertMessage("unknown parameter 'sise'", Map.of("sise", "1g"));
    }

    private void assertMessage(String part, Map<String, String> params) {
        IOException e = assertThrows(IOException.class, () -> backend.open(params, false));
        assertTrue(e.getMessage().contains(part), e.getMessage());
        assertTrue(e.getMessage().indexOf('\n') < 0);
    }

    @Test
    void probesEveryCapability() throws IOException {
        assertEquals(new Capabilities(true, true, true, true, true, true, true, true), open("1m").capabilities());
        assertEquals(Capabilities.READ_ONLY, backend.open(Map.of("size", "1m"), true).capabilities());
    }

    @Test
    void pagesAreAllocatedOnWriteAndFreedByTrimAndZeroes() throws Exception {
        MemoryBlockDevice dev = open("1t");
        assertEquals(0, dev.allocatedBytes());
        dev.write(3L * PAGE + 512, ByteBuffer.allocate(512), false).get();
        dev.write((1L << 40) - 512, ByteBuffer.allocate(512), false).get();
        assertEquals(2L * PAGE, dev.allocatedBytes());

        dev.trim(3L * PAGE, 1024).get();
        assertEquals(2L * PAGE, dev.allocatedBytes(), "a partial trim zeroes in place");
        dev.trim(3L * PAGE, PAGE).get();
        assertEquals(PAGE, dev.allocatedBytes());
        dev.writeZeroes((1L << 40) - 2L * PAGE, 2L * PAGE, false).get();
        assertEquals(0, dev.allocatedBytes());
    }

    /**
     * RNBD 2.2's NOUNMAP: WRITE_ZEROES with it leaves the range allocated (zeroed in place, the
     * missing pages allocated), without it frees the range; a secure erase frees it too.
     */
    @Test
    void writeZeroesWithNoUnmapKeepsTheRangeAllocated() throws Exception {
        MemoryBlockDevice dev = open("1m");
        dev.write(0, ByteBuffer.wrap(new byte[PAGE]).put(0, (byte) 7), false).get();
        assertEquals(PAGE, dev.allocatedBytes());
        dev.writeZeroes(0, 4L * PAGE, false, true).get();
        assertEquals(4L * PAGE, dev.allocatedBytes(), "zeroed in place and allocated, not unmapped");
        ByteBuffer back = ByteBuffer.allocate(PAGE);
        dev.read(0, back).get();
        assertEquals(0, back.get(0));
        dev.writeZeroes(0, 2L * PAGE, false, false).get();
        assertEquals(2L * PAGE, dev.allocatedBytes(), "without NOUNMAP the range is unmapped");
        dev.write(3L * PAGE, ByteBuffer.wrap(new byte[PAGE]).put(9, (byte) 5), false).get();
        dev.secureErase(2L * PAGE, 2L * PAGE).get();
        assertEquals(0, dev.allocatedBytes());
        dev.read(3L * PAGE, back.clear()).get();
        assertEquals(0, back.get(9));
    }

    @Test
    void stoppingTheBackendClosesItsDevices() throws Exception {
        BlockDevice dev = open("1m");
        backend.close();
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> dev.read(0, ByteBuffer.allocate(512)).get());
        assertEquals(Errno.ENODEV, BlockIoException.errnoOf(e));
        IOException refused = assertThrows(IOException.class, () -> open("1m"));
        assertTrue(refused.getMessage().contains("stopped"));
    }

    /** rnbd:export-add checks with validate: what open would refuse, refused without opening. */
    @Test
    void validateRefusesWhatCanNeverOpen() throws IOException {
        for (String bad : new String[] {"513", "9223372036854775807", "65t", "0", "lots"}) {
            IOException e = assertThrows(IOException.class, () -> backend.validate(Map.of("size", bad), false), bad);
            assertTrue(e.getMessage().startsWith("memory backend: "), e.getMessage());
        }
        backend.validate(Map.of("size", "64t"), false);
        assertEquals(0, backend.openCount(), "validate opens nothing");
    }

    @Test
    void resizeGrowsKeepingDataAndTellsWatchers() throws Exception {
        MemoryBlockDevice dev = open("1m");
        java.util.List<Long> told = new java.util.concurrent.CopyOnWriteArrayList<>();
        dev.watchSize(told::add);
        byte[] data = new byte[512];
        java.util.Arrays.fill(data, (byte) 7);
        dev.write((1 << 20) - 512, ByteBuffer.wrap(data), false).get();

        dev.resize(1L << 30).get(); // across a leaf (256 MiB): the directory is replaced
        assertEquals(1L << 30, dev.size());
        assertEquals(java.util.List.of(1L << 30), told);
        ByteBuffer kept = ByteBuffer.allocate(512);
        dev.read((1 << 20) - 512, kept).get();
        assertTrue(java.util.Arrays.equals(data, kept.array()), "data below the old end survives");
        dev.write((1L << 30) - 512, ByteBuffer.wrap(data), false).get(); // beyond the old end
        ByteBuffer fresh = ByteBuffer.allocate(512);
        dev.read(1 << 20, fresh).get();
        assertTrue(java.util.Arrays.equals(new byte[512], fresh.array()), "the grown part reads zeros");
    }

    @Test
    void shrinkFreesTheTailAndGrowingAgainReadsZeros() throws Exception {
        MemoryBlockDevice dev = open("1m");
        // IO is checked against the size the device reports, as rnbd-server checks it
        BlockDevice checked = BlockRequests.checked(dev);
        byte[] ones = new byte[4096];
        java.util.Arrays.fill(ones, (byte) 1);
        dev.write(PAGE - 2048, ByteBuffer.wrap(ones), false).get(); // straddles the new end
        dev.write((1 << 20) - 4096, ByteBuffer.wrap(ones), false).get();
        dev.resize(PAGE - 1024).get();
        assertEquals(PAGE, dev.allocatedBytes(), "pages beyond the new end are freed");
        ExecutionException beyond = assertThrows(ExecutionException.class,
                () -> checked.read(PAGE, ByteBuffer.allocate(512)).get());
        assertEquals(Errno.EINVAL, BlockIoException.errnoOf(beyond));
        dev.resize(1 << 20).get();
        ByteBuffer tail = ByteBuffer.allocate(2048);
        dev.read(PAGE - 2048, tail).get();
        byte[] expect = new byte[2048];
        java.util.Arrays.fill(expect, 0, 1024, (byte) 1);
        assertTrue(java.util.Arrays.equals(expect, tail.array()), "what was cut off does not come back");
    }

    @Test
    void resizeRefusesBadSizesAndReadOnlyDevices() throws Exception {
        MemoryBlockDevice dev = open("1m");
        for (long bad : new long[] {0, 513, 65L << 40}) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> dev.resize(bad).get());
            assertEquals(Errno.EINVAL, BlockIoException.errnoOf(e));
        }
        assertEquals(1 << 20, dev.size());
        BlockDevice ro = backend.open(Map.of("size", "1m"), true);
        ExecutionException e = assertThrows(ExecutionException.class, () -> ro.resize(2 << 20).get());
        assertEquals(Errno.EROFS, BlockIoException.errnoOf(e));
    }

    @Test
    void isAServiceLoaderProvider() {
        boolean found = ServiceLoader.load(BlockBackend.class).stream()
                .anyMatch(p -> p.type() == MemoryBackend.class);
        assertTrue(found);
    }
}

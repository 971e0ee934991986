package io.rnbd.rnbd.backend.memory.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.Errno;
import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
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
        assertEquals(new Capabilities(true, true, true, true, true, true), open("1m").capabilities());
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

    @Test
    void isAServiceLoaderProvider() {
        boolean found = ServiceLoader.load(BlockBackend.class).stream()
                .anyMatch(p -> p.type() == MemoryBackend.class);
        assertTrue(found);
    }
}

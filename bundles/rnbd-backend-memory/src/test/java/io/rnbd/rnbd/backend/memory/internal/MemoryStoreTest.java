package io.rnbd.rnbd.backend.memory.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.Test;

/**
 * A memory export's store lives as long as the export, not as the backend: it is kept across
 * the device's close, the backend's close (its bundle stopping) and a new class loader of the
 * backend (its bundle updated), and freed by {@code release}.
 */
class MemoryStoreTest {
    private static final Map<String, String> SIZE_1M = Map.of("size", "1m");

    private final ConcurrentMap<String, Object> holder = new ConcurrentHashMap<>();

    @Test
    void anExportsDataOutlivesItsDeviceAndItsBackend() throws Exception {
        MemoryBackend first = new MemoryBackend(holder);
        BlockDevice dev = first.open("mem0", SIZE_1M, false);
        write(dev, 4096, 7);
        dev.close();
        BlockDevice again = first.open("mem0", SIZE_1M, false);
        assertArrayEquals(pattern(7), read(again, 4096), "kept across the device's close");
        write(again, 8192, 8);

        first.close(); // the bundle stops: its devices close, the stores stay in the holder
        ExecutionException closed = assertThrows(ExecutionException.class, () -> read(again, 4096));
        assertEquals(Errno.ENODEV, BlockIoException.errnoOf(closed));

        MemoryBackend second = new MemoryBackend(holder);
        BlockDevice after = second.open("mem0", SIZE_1M, false);
        assertArrayEquals(pattern(7), read(after, 4096), "kept across the backend's close");
        assertArrayEquals(pattern(8), read(after, 8192));
        second.close();
    }

    /**
     * What {@code bundle:update} does: the backend's classes come from a new class loader. The
     * holder handed over holds JDK objects only, so the new classes read what the old ones wrote
     * (with a class of the bundle's in the holder this fails with a ClassCastException).
     */
    @Test
    void anExportsDataOutlivesTheBackendsClassLoader() throws Exception {
        BlockBackend old = backendInNewClassLoader();
        BlockDevice dev = old.open("mem0", SIZE_1M, false);
        write(dev, 65536 - 512, 3); // across a page boundary
        write(dev, (1 << 20) - 4096, 4);
        old.release("never-there");
        ((AutoCloseable) old).close();
        assertOnlyJdkObjects(holder);

        BlockBackend updated = backendInNewClassLoader();
        assertNotSame(old.getClass(), updated.getClass(), "two class loaders");
        BlockDevice after = updated.open("mem0", SIZE_1M, false);
        assertArrayEquals(pattern(3), read(after, 65536 - 512));
        assertArrayEquals(pattern(4), read(after, (1 << 20) - 4096));
        ((AutoCloseable) updated).close();
    }

    @Test
    void releaseFreesTheStoreAndTheNextOpenIsEmpty() throws Exception {
        MemoryBackend backend = new MemoryBackend(holder);
        MemoryBlockDevice dev = (MemoryBlockDevice) backend.open("mem0", SIZE_1M, false);
        write(dev, 0, 9);
        assertEquals(MemoryBlockDevice.PAGE, dev.allocatedBytes());
        dev.close();
        backend.release("mem0");
        assertTrue(holder.isEmpty(), "the holder forgets the export");
        MemoryBlockDevice fresh = (MemoryBlockDevice) backend.open("mem0", SIZE_1M, false);
        assertArrayEquals(new byte[512], read(fresh, 0));
        assertEquals(0, fresh.allocatedBytes());
        backend.close();
    }

    @Test
    void exportsAreKeptApartByName() throws Exception {
        MemoryBackend backend = new MemoryBackend(holder);
        BlockDevice a = backend.open("a", SIZE_1M, false);
        BlockDevice b = backend.open("b", SIZE_1M, false);
        write(a, 0, 1);
        assertArrayEquals(new byte[512], read(b, 0));
        backend.close();
    }

    @Test
    void aStoreHasOneDeviceAtATime() throws Exception {
        MemoryBackend backend = new MemoryBackend(holder);
        BlockDevice dev = backend.open("mem0", SIZE_1M, false);
        IOException busy = assertThrows(IOException.class, () -> backend.open("mem0", SIZE_1M, false));
        assertEquals("memory backend: export mem0 is open already", busy.getMessage());
        dev.close();
        backend.open("mem0", SIZE_1M, true).close();
        backend.close();
    }

    @Test
    void aKeptStoreKeepsTheSizeItWasResizedTo() throws Exception {
        MemoryBackend backend = new MemoryBackend(holder);
        BlockDevice dev = backend.open("mem0", SIZE_1M, false);
        dev.resize(4L << 20).get();
        dev.close();
        assertEquals(4L << 20, backend.open("mem0", SIZE_1M, false).size());
        backend.close();
    }

    @Test
    void aDeviceWithoutAnExportFreesItsMemoryOnClose() throws Exception {
        MemoryBackend backend = new MemoryBackend(holder);
        MemoryBlockDevice dev = (MemoryBlockDevice) backend.open(SIZE_1M, false);
        write(dev, 0, 5);
        dev.close();
        assertEquals(0, dev.allocatedBytes());
        assertTrue(holder.isEmpty(), "nothing kept for a device without an export");
        backend.close();
    }

    @Test
    void aStoreLaidOutByAnotherVersionIsRefusedNotMisread() {
        Map<String, Object> other = new ConcurrentHashMap<>(MemoryStore.empty(1 << 20).toMap());
        other.put("layout", "pages-4KiB-v2");
        holder.put("mem0", other);
        MemoryBackend backend = new MemoryBackend(holder);
        IOException e = assertThrows(IOException.class, () -> backend.open("mem0", SIZE_1M, false));
        assertTrue(e.getMessage().startsWith("memory backend: export mem0: its memory is laid out as "
                + "'pages-4KiB-v2'"), e.getMessage());
        backend.release("mem0");
        assertFalse(holder.containsKey("mem0"), "release drops even a store it cannot read");
    }

    // ---- helpers

    /** MemoryBackend from a class loader of its own, over the same holder: the bundle updated. */
    private BlockBackend backendInNewClassLoader() throws Exception {
        URL classes = MemoryBackend.class.getProtectionDomain().getCodeSource().getLocation();
        ClassLoader loader = new URLClassLoader(new URL[] {classes}, getClass().getClassLoader()) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                if (!name.startsWith(MemoryBackend.class.getPackageName())) {
                    return super.loadClass(name, resolve); // the API and the JDK: shared, as OSGi wires them
                }
                synchronized (getClassLoadingLock(name)) {
                    Class<?> c = findLoadedClass(name);
                    return c != null ? c : findClass(name); // the bundle's own classes: this loader's
                }
            }
        };
        Class<?> type = loader.loadClass(MemoryBackend.class.getName());
        assertNotSame(MemoryBackend.class, type);
        return (BlockBackend) type.getConstructor(ConcurrentMap.class).newInstance(holder);
    }

    /** Every object reachable through maps, references and arrays in the holder is the JDK's. */
    private static void assertOnlyJdkObjects(Object o) {
        if (o == null) {
            return;
        }
        assertNull(o.getClass().getClassLoader(), o.getClass() + " in the holder is not a JDK class");
        if (o instanceof Map<?, ?> m) {
            m.keySet().forEach(MemoryStoreTest::assertOnlyJdkObjects);
            m.values().forEach(MemoryStoreTest::assertOnlyJdkObjects);
        } else if (o instanceof Collection<?> c) {
            c.forEach(MemoryStoreTest::assertOnlyJdkObjects);
        } else if (o instanceof AtomicReference<?> r) {
            assertOnlyJdkObjects(r.get());
        } else if (o instanceof AtomicReferenceArray<?> a) {
            for (int i = 0; i < a.length(); i++) {
                assertOnlyJdkObjects(a.get(i));
            }
        }
    }

    private static byte[] pattern(int seed) {
        byte[] b = new byte[512];
        Arrays.fill(b, (byte) seed);
        b[0] = (byte) (seed + 1);
        return b;
    }

    private static void write(BlockDevice dev, long offset, int seed) throws Exception {
        dev.write(offset, ByteBuffer.wrap(pattern(seed)), false).get();
    }

    private static byte[] read(BlockDevice dev, long offset) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(512);
        dev.read(offset, b).get();
        return b.array();
    }
}

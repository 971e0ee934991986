package io.rnbd.rnbd.backend.memory.internal;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * What one memory export holds: its size, its page directory (two levels of 64 KiB off-heap
 * pages) and the count of pages in it, each in a JDK type. The device works on these objects
 * directly, so there is nothing to copy back when it closes; and because nothing here is a
 * class of this bundle, a store written by one class loader of the bundle is read by the next
 * one after {@code bundle:update}. In the holder ({@link MemoryStores}) a store is kept as
 * {@link #toMap()}: a map of those JDK objects under fixed keys, with {@link #LAYOUT} naming
 * how pages are laid out, so that a future version that lays them out otherwise refuses a
 * store it cannot read instead of misreading it.
 *
 * @param open whether a device is attached to the store now (at most one is)
 */
record MemoryStore(AtomicLong size, AtomicReference<AtomicReferenceArray<AtomicReferenceArray<ByteBuffer>>> directory,
                   AtomicLong allocatedPages, AtomicBoolean open) {
    /** The page layout this version reads and writes: change it with {@link MemoryBlockDevice#PAGE} or the directory. */
    static final String LAYOUT = "pages-64KiB-leaves-4096-v1";

    private static final String K_LAYOUT = "layout";
    private static final String K_SIZE = "size";
    private static final String K_DIRECTORY = "directory";
    private static final String K_ALLOCATED = "allocated.pages";
    private static final String K_OPEN = "open";

    /** A new, empty store of {@code size} bytes (nothing is allocated until written). */
    static MemoryStore empty(long size) {
        return new MemoryStore(new AtomicLong(size),
                new AtomicReference<>(new AtomicReferenceArray<>(MemoryBlockDevice.leaves(size))), new AtomicLong(),
                new AtomicBoolean());
    }

    /** The store as the holder keeps it: JDK objects only. */
    Map<String, Object> toMap() {
        Map<String, Object> m = new ConcurrentHashMap<>();
        m.put(K_LAYOUT, LAYOUT);
        m.put(K_SIZE, size);
        m.put(K_DIRECTORY, directory);
        m.put(K_ALLOCATED, allocatedPages);
        m.put(K_OPEN, open);
        return m;
    }

    /**
     * The store a holder kept ({@link #toMap()}), perhaps by another class loader of this bundle.
     *
     * @throws IllegalArgumentException when it was laid out by a version this one cannot read
     */
    @SuppressWarnings("unchecked")
    static MemoryStore fromMap(Object kept) {
        if (!(kept instanceof Map<?, ?> m) || !LAYOUT.equals(m.get(K_LAYOUT))) {
            Object layout = kept instanceof Map<?, ?> m ? m.get(K_LAYOUT) : kept;
            throw new IllegalArgumentException("its memory is laid out as '" + layout + "', this version reads '"
                    + LAYOUT + "' (remove and add the export again to start it empty)");
        }
        return new MemoryStore((AtomicLong) m.get(K_SIZE),
                (AtomicReference<AtomicReferenceArray<AtomicReferenceArray<ByteBuffer>>>) m.get(K_DIRECTORY),
                (AtomicLong) m.get(K_ALLOCATED), (AtomicBoolean) m.get(K_OPEN));
    }

    /** Drop every page (the store is being freed): the memory goes back to the JVM with the next GC. */
    void free() {
        AtomicReferenceArray<AtomicReferenceArray<ByteBuffer>> dir = directory.get();
        for (int d = 0; d < dir.length(); d++) {
            dir.set(d, null);
        }
        allocatedPages.set(0);
    }
}

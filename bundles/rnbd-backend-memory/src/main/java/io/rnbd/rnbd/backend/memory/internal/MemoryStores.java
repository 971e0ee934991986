package io.rnbd.rnbd.backend.memory.internal;

import java.io.IOException;
import java.util.concurrent.ConcurrentMap;

/**
 * The memory exports' stores by export name, in a holder that outlives this bundle's class
 * loader: a {@link ConcurrentMap} of JDK objects ({@link MemoryStore#toMap()}) that whoever
 * builds the backend hands in. In OSGi it is held by the framework itself (see
 * internal.osgi.StoreHolder), so a store lives as long as its export, across the backend's
 * stop, start and update and rnbd-server's; it goes when the export is removed
 * ({@link #release}) or the JVM ends.
 */
final class MemoryStores {
    private final ConcurrentMap<String, Object> holder;

    MemoryStores(ConcurrentMap<String, Object> holder) {
        this.holder = holder;
    }

    /** What {@link #attach} found: the store, and whether it was there before. */
    record Attached(MemoryStore store, boolean kept) {
    }

    /**
     * The store of {@code export}, made empty with {@code size} bytes if there is none, marked
     * open: at most one device works on a store at a time.
     *
     * @throws IOException when a device has it open already, or it was laid out by a version
     *                     this one cannot read
     */
    Attached attach(String export, long size) throws IOException {
        MemoryStore made = MemoryStore.empty(size);
        Object kept = holder.putIfAbsent(export, made.toMap());
        MemoryStore store;
        try {
            store = kept == null ? made : MemoryStore.fromMap(kept);
        } catch (IllegalArgumentException e) {
            throw new IOException("memory backend: export " + export + ": " + e.getMessage());
        }
        if (!store.open().compareAndSet(false, true)) {
            throw new IOException("memory backend: export " + export + " is open already");
        }
        return new Attached(store, kept != null);
    }

    /** The device on {@code store} closed: the store stays for the export's next open. */
    static void detach(MemoryStore store) {
        store.open().set(false);
    }

    /**
     * The export is gone for good: its store is dropped, and its pages freed unless a device
     * still has it open (that device's pages go when it closes).
     *
     * @return whether there was a store
     */
    boolean release(String export) {
        Object kept = holder.remove(export);
        if (kept == null) {
            return false;
        }
        try {
            MemoryStore store = MemoryStore.fromMap(kept);
            if (!store.open().get()) {
                store.free();
            }
        } catch (IllegalArgumentException | ClassCastException unreadable) {
            // another version's layout: dropped from the holder, its pages go with the next GC
        }
        return true;
    }

    /** Whether {@code export} has a store (for tests). */
    boolean has(String export) {
        return holder.containsKey(export);
    }
}

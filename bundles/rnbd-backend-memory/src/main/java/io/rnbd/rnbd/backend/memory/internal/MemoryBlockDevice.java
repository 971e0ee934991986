package io.rnbd.rnbd.backend.memory.internal;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.Capabilities;
import java.nio.ByteBuffer;
import io.rnbd.rnbd.api.SizeWatch;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongConsumer;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;

/**
 * A sparse device in off-heap pages of 64 KiB, allocated on first write and dropped by trim
 * and by WRITE_ZEROES; WRITE_ZEROES with noUnmap (RNBD's NOUNMAP) zeroes them in place and
 * allocates what is not, so the range stays allocated; a secure erase zeroes pages before it
 * drops them, so their bytes are gone from memory, not only from the device.
 * The page directory is two-level; pages are installed by CAS, so concurrent IO never takes a
 * lock. A leaf (4096 pages, 256 MiB of the device) is installed under the store's directory
 * reference as monitor (the store's, not the device's: the next device on the store shares it), as
 * is a resize, which replaces the directory by a copy of another length: a leaf installed in
 * the old one while it was copied would be lost. Every operation completes inline. Buffer
 * positions are never moved. Requests arrive checked by the caller ({@link io.rnbd.rnbd.api.BlockRequests}):
 * the device itself refuses only IO after its close.
 *
 * <p>Size, directory and page count live in the device's {@link MemoryStore}, JDK objects the
 * device works on directly. An export's device leaves its store behind when it closes (the
 * next open of the export, by this class loader or the next one, finds the data); a device
 * opened without an export frees its pages on close.
 */
final class MemoryBlockDevice implements BlockDevice {
    static final int SECTOR = 512;
    static final int PAGE_SHIFT = 16;
    static final int PAGE = 1 << PAGE_SHIFT;
    private static final int LEAF_SHIFT = 12;
    private static final int LEAF = 1 << LEAF_SHIFT;
    private static final byte[] ZEROS = new byte[PAGE];
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);
    private static final Capabilities CAPS = new Capabilities(true, true, true, true, true, true, true, true);

    private final MemoryStore store;
    private final AtomicLong size;
    private final AtomicReference<AtomicReferenceArray<AtomicReferenceArray<ByteBuffer>>> directory;
    private final AtomicLong allocatedPages;
    /** Whether the store is an export's, kept when the device closes. */
    private final boolean keepsStore;
    private final boolean readOnly;
    private final List<LongConsumer> sizeListeners = new CopyOnWriteArrayList<>();
    private final Consumer<MemoryBlockDevice> onClose;
    private volatile boolean closed;

    /**
     * @param keepsStore whether {@code store} outlives the device (an export's), or goes with it
     */
    MemoryBlockDevice(MemoryStore store, boolean keepsStore, boolean readOnly, Consumer<MemoryBlockDevice> onClose) {
        this.store = store;
        this.size = store.size();
        this.directory = store.directory();
        this.allocatedPages = store.allocatedPages();
        this.keepsStore = keepsStore;
        this.readOnly = readOnly;
        this.onClose = onClose;
    }

    static int leaves(long size) {
        long pages = (size + PAGE - 1) >>> PAGE_SHIFT;
        return (int) ((pages + LEAF - 1) >>> LEAF_SHIFT);
    }

    @Override
    public long size() {
        return size.get();
    }

    @Override
    public Capabilities capabilities() {
        return readOnly ? CAPS.readOnly() : CAPS;
    }

    /** Bytes of memory held by written pages. */
    long allocatedBytes() {
        return allocatedPages.get() << PAGE_SHIFT;
    }

    @Override
    public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
        if (closed) {
            return CompletableFuture.failedFuture(closedError());
        }
        int len = dst.remaining();
        int at = dst.position();
        while (len > 0) {
            int inPage = (int) (offset & (PAGE - 1));
            int n = Math.min(PAGE - inPage, len);
            ByteBuffer page = page(offset >>> PAGE_SHIFT);
            if (page == null) {
                dst.put(at, ZEROS, 0, n);
            } else {
                dst.put(at, page, inPage, n);
            }
            offset += n;
            at += n;
            len -= n;
        }
        return DONE;
    }

    @Override
    public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
        return store(offset, src.remaining(), src);
    }

    /** Put {@code src} (zeros when null) into the pages of the range, allocating what is missing. */
    private CompletableFuture<Void> store(long offset, long length, ByteBuffer src) {
        if (closed) {
            return CompletableFuture.failedFuture(closedError());
        }
        long len = length;
        int at = src == null ? 0 : src.position();
        while (len > 0) {
            int inPage = (int) (offset & (PAGE - 1));
            int n = (int) Math.min(PAGE - inPage, len);
            ByteBuffer page;
            try {
                page = allocate(offset >>> PAGE_SHIFT);
            } catch (OutOfMemoryError e) {
                return CompletableFuture.failedFuture(new BlockIoException(Errno.ENOSPC,
                        "out of memory for page at " + offset + " (raise -XX:MaxDirectMemorySize)"));
            } catch (IllegalStateException e) {
                return CompletableFuture.failedFuture(new BlockIoException(Errno.EINVAL, e.getMessage()));
            }
            if (src == null) {
                page.put(inPage, ZEROS, 0, n);
            } else {
                page.put(inPage, src, at, n);
                at += n;
            }
            offset += n;
            len -= n;
        }
        return DONE;
    }

    @Override
    public CompletableFuture<Void> flush() {
        return closed ? CompletableFuture.failedFuture(closedError()) : DONE;
    }

    @Override
    public CompletableFuture<Void> trim(long offset, long length) {
        return discard(offset, length);
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
        return discard(offset, length);
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua, boolean noUnmap) {
        return noUnmap ? store(offset, length, null) : discard(offset, length);
    }

    @Override
    public CompletableFuture<Void> secureErase(long offset, long length) {
        if (closed) {
            return CompletableFuture.failedFuture(closedError());
        }
        // zero what is there first: a dropped page's memory goes back to the allocator as it is
        for (long at = offset, left = length; left > 0; ) {
            int inPage = (int) (at & (PAGE - 1));
            int n = (int) Math.min(PAGE - inPage, left);
            ByteBuffer page = page(at >>> PAGE_SHIFT);
            if (page != null) {
                page.put(inPage, ZEROS, 0, n);
            }
            at += n;
            left -= n;
        }
        return discard(offset, length);
    }

    /** Full pages are freed, partial ones zeroed in place: both read back as zeros. */
    private CompletableFuture<Void> discard(long offset, long length) {
        if (closed) {
            return CompletableFuture.failedFuture(closedError());
        }
        discard(offset, length, size.get());
        return DONE;
    }

    private void discard(long offset, long length, long size) {
        while (length > 0) {
            int inPage = (int) (offset & (PAGE - 1));
            int n = (int) Math.min(PAGE - inPage, length);
            long index = offset >>> PAGE_SHIFT;
            if (n == PAGE || (inPage == 0 && offset + n == size)) {
                free(index);
            } else {
                ByteBuffer page = page(index);
                if (page != null) {
                    page.put(inPage, ZEROS, 0, n);
                }
            }
            offset += n;
            length -= n;
        }
    }

    private ByteBuffer page(long index) {
        AtomicReferenceArray<AtomicReferenceArray<ByteBuffer>> dir = directory.get();
        int d = (int) (index >>> LEAF_SHIFT);
        AtomicReferenceArray<ByteBuffer> leaf = d < dir.length() ? dir.get(d) : null;
        return leaf == null ? null : leaf.get((int) (index & (LEAF - 1)));
    }

    private ByteBuffer allocate(long index) {
        int d = (int) (index >>> LEAF_SHIFT);
        AtomicReferenceArray<AtomicReferenceArray<ByteBuffer>> dir = directory.get();
        AtomicReferenceArray<ByteBuffer> leaf = d < dir.length() ? dir.get(d) : null;
        if (leaf == null) {
            leaf = leaf(d);
        }
        int i = (int) (index & (LEAF - 1));
        ByteBuffer page = leaf.get(i);
        if (page == null) {
            ByteBuffer fresh = ByteBuffer.allocateDirect(PAGE);
            if (leaf.compareAndSet(i, null, fresh)) {
                allocatedPages.incrementAndGet();
                return fresh;
            }
            page = leaf.get(i);
            if (page == null) {
                // freed by a racing trim of the same page: overlapping IO, either order is valid
                return allocate(index);
            }
        }
        return page;
    }

    /** The leaf {@code d}, installed now if there is none (rare: once per 256 MiB). */
    private AtomicReferenceArray<ByteBuffer> leaf(int d) {
        synchronized (directory) {
            AtomicReferenceArray<AtomicReferenceArray<ByteBuffer>> dir = directory.get();
            if (d >= dir.length()) {
                throw new IllegalStateException("page beyond the device: a resize raced this write");
            }
            AtomicReferenceArray<ByteBuffer> leaf = dir.get(d);
            if (leaf == null) {
                leaf = new AtomicReferenceArray<>(LEAF);
                dir.set(d, leaf);
            }
            return leaf;
        }
    }

    private void free(long index) {
        AtomicReferenceArray<AtomicReferenceArray<ByteBuffer>> dir = directory.get();
        int d = (int) (index >>> LEAF_SHIFT);
        AtomicReferenceArray<ByteBuffer> leaf = d < dir.length() ? dir.get(d) : null;
        if (leaf != null && leaf.getAndSet((int) (index & (LEAF - 1)), null) != null) {
            allocatedPages.decrementAndGet();
        }
    }

    @Override
    public SizeWatch watchSize(LongConsumer listener) {
        sizeListeners.add(listener);
        return () -> sizeListeners.remove(listener);
    }

    /**
     * Grow (sparse: nothing is allocated) or shrink (the pages beyond the new end are freed and
     * the rest of the last page zeroed, so growing again reads zeros there).
     */
    @Override
    public CompletableFuture<Void> resize(long bytes) {
        if (closed) {
            return CompletableFuture.failedFuture(closedError());
        }
        if (readOnly) {
            return CompletableFuture.failedFuture(new BlockIoException(Errno.EROFS, "device is read-only"));
        }
        try {
            MemoryBackend.checkSize("size " + bytes, bytes);
        } catch (java.io.IOException e) {
            return CompletableFuture.failedFuture(new BlockIoException(Errno.EINVAL, e.getMessage()));
        }
        long before;
        synchronized (directory) {
            before = size.get();
            if (bytes < before) {
                size.set(bytes); // what checks requests against size() refuses IO beyond the new end from here on
                discard(bytes, Math.min(before, ((bytes + PAGE - 1) & ~(long) (PAGE - 1))) - bytes, before);
                for (long p = (bytes + PAGE - 1) >>> PAGE_SHIFT; p < (before + PAGE - 1) >>> PAGE_SHIFT; p++) {
                    free(p);
                }
            }
            AtomicReferenceArray<AtomicReferenceArray<ByteBuffer>> old = directory.get();
            AtomicReferenceArray<AtomicReferenceArray<ByteBuffer>> dir = new AtomicReferenceArray<>(leaves(bytes));
            for (int d = 0; d < Math.min(old.length(), dir.length()); d++) {
                dir.set(d, old.get(d));
            }
            directory.set(dir);
            size.set(bytes);
        }
        if (before != bytes) {
            for (LongConsumer l : sizeListeners) {
                l.accept(bytes);
            }
        }
        return DONE;
    }

    private static BlockIoException closedError() {
        return new BlockIoException(Errno.ENODEV, "device is closed");
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (keepsStore) {
            MemoryStores.detach(store);
        } else {
            store.free();
        }
        onClose.accept(this);
    }
}

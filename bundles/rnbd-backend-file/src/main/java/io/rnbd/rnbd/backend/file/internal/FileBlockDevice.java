package io.rnbd.rnbd.backend.file.internal;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.Capabilities;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import io.rnbd.rnbd.api.SizeWatch;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongConsumer;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

/**
 * A file or block device behind a {@link FileChannel}. Positional reads and writes run
 * concurrently on the backend's IO threads; FLUSH and FUA are {@code fdatasync}. Trim and
 * write-zeroes are fallocate(2) through the project's JNI library ({@link FileNative}) on a
 * descriptor of the device's own: trim and a write-zeroes that may unmap punch a hole
 * (PUNCH_HOLE), one with noUnmap (RNBD's NOUNMAP) zeroes in place (ZERO_RANGE, or a punch
 * then an allocation where the file system has no ZERO_RANGE); where the file system or the
 * library has none of it, they write zeros, correct but freeing nothing (then
 * {@code trim=false, zero=false}). No secure erase: a file system cannot promise that a
 * file's old blocks are gone. With O_DIRECT, buffers that are not aligned go through an
 * aligned per-thread bounce buffer. Buffer positions are never moved. Requests arrive
 * checked by the caller ({@link io.rnbd.rnbd.api.BlockRequests}): the device itself refuses
 * only IO after its close.
 */
final class FileBlockDevice implements BlockDevice {
    /** Without fallocate: trim and write-zeroes write zeros. */
    private static final Capabilities CAPS = new Capabilities(true, true, true, false, false, true);
    /** With fallocate: holes punched, ranges zeroed by the file system, nothing written. */
    private static final Capabilities CAPS_FALLOCATE = new Capabilities(true, true, true, true, true, true, true,
            false);
    private static final int ZERO_CHUNK = 256 * 1024;
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    private final FileChannel ch;
    private final String name;
    private volatile long size;
    /** A regular file (resize truncates or extends it), not a block device. */
    private final boolean regular;
    /** The export is the whole file (no size=): it follows the file's length. */
    private final boolean follow;
    private final List<LongConsumer> sizeListeners = new CopyOnWriteArrayList<>();
    private final int lbs;
    private final boolean direct;
    private final boolean readOnly;
    private final Executor executor;
    private final Consumer<FileBlockDevice> onClose;
    private final ByteBuffer zeros;
    private final ThreadLocal<ByteBuffer> bounce;
    private volatile boolean closed;
    /** The descriptor fallocate works on, -1 without the JNI library. */
    private final int fd;
    /** The file system refused PUNCH_HOLE / ZERO_RANGE once (EOPNOTSUPP): the next ones go the other way at once. */
    private volatile boolean noPunch;
    private volatile boolean noZeroRange;
    /**
     * fallocate calls hold it shared, close exclusively: a descriptor closed under a running call
     * could be reused by another open and the call punch a hole in another file.
     */
    private final java.util.concurrent.locks.ReadWriteLock fdLock = new java.util.concurrent.locks.ReentrantReadWriteLock();

    @FunctionalInterface
    private interface Io {
        void run() throws IOException;
    }

    FileBlockDevice(FileChannel ch, String name, long size, int lbs, boolean direct, boolean readOnly,
                    boolean regular, boolean follow, Executor executor, Consumer<FileBlockDevice> onClose) {
        this(ch, name, size, lbs, direct, readOnly, regular, follow, executor, onClose, -1);
    }

    /** @param fd a descriptor of the same file for fallocate ({@link FileNative#open}), owned now; -1 for none */
    FileBlockDevice(FileChannel ch, String name, long size, int lbs, boolean direct, boolean readOnly,
                    boolean regular, boolean follow, Executor executor, Consumer<FileBlockDevice> onClose, int fd) {
        this.fd = fd;
        this.ch = ch;
        this.name = name;
        this.size = size;
        this.regular = regular;
        this.follow = follow;
        this.lbs = lbs;
        this.direct = direct;
        this.readOnly = readOnly;
        this.executor = executor;
        this.onClose = onClose;
        this.zeros = readOnly ? null : aligned(ZERO_CHUNK, lbs);
        this.bounce = ThreadLocal.withInitial(() -> aligned(maxIoSize(), lbs));
    }

    private static ByteBuffer aligned(int capacity, int alignment) {
        return ByteBuffer.allocateDirect(capacity + alignment).alignedSlice(alignment).limit(capacity).slice();
    }

    /**
     * For a whole-file export, the file's length now (one fstat; an {@code truncate -s} or a
     * copy that grew the file is seen here, and told to watchers); else the configured size.
     */
    @Override
    public long size() {
        if (follow && !closed) {
            try {
                long now = ch.size();
                sizeNow(now - now % lbs);
            } catch (IOException e) {
                // closed meanwhile, or the file system failed: the last size known stands
            }
        }
        return size;
    }

    private void sizeNow(long now) {
        long before;
        synchronized (this) {
            before = size;
            size = now;
        }
        if (before != now) {
            for (LongConsumer l : sizeListeners) {
                l.accept(now);
            }
        }
    }

    @Override
    public SizeWatch watchSize(LongConsumer listener) {
        sizeListeners.add(listener);
        return () -> sizeListeners.remove(listener);
    }

    /**
     * Grow: the file is extended (sparse) where it is shorter. Shrink: a whole-file export
     * truncates the file, a window (size= shorter than the file) only ends earlier. A block
     * device cannot change its size from here (EOPNOTSUPP).
     */
    @Override
    public CompletableFuture<Void> resize(long bytes) {
        if (closed) {
            return CompletableFuture.failedFuture(closedError());
        }
        if (readOnly) {
            return CompletableFuture.failedFuture(new BlockIoException(Errno.EROFS, name + " is open read-only"));
        }
        if (!regular) {
            return CompletableFuture.failedFuture(new BlockIoException(Errno.EOPNOTSUPP, name
                    + " is a block device: resize the device itself"));
        }
        if (bytes <= 0 || bytes % lbs != 0) {
            return CompletableFuture.failedFuture(new BlockIoException(Errno.EINVAL, "size " + bytes
                    + " is not a positive multiple of " + lbs));
        }
        return submit(() -> {
            long length = ch.size();
            if (bytes > length) {
                ch.write(ByteBuffer.allocate(1), bytes - 1); // sparse: one byte at the new end
                ch.force(true);
            } else if (follow && bytes < length) {
                ch.truncate(bytes);
                ch.force(true);
            }
            sizeNow(bytes);
        });
    }

    @Override
    public int logicalBlockSize() {
        return lbs;
    }

    @Override
    public int physicalBlockSize() {
        return Math.max(lbs, 4096);
    }

    @Override
    public Capabilities capabilities() {
        Capabilities c = fd >= 0 ? CAPS_FALLOCATE : CAPS;
        return readOnly ? c.readOnly() : c;
    }

    @Override
    public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
        if (closed) {
            return CompletableFuture.failedFuture(closedError());
        }
        ByteBuffer d = dst.duplicate();
        return submit(() -> {
            if (direct && !isAligned(d)) {
                ByteBuffer b = bounce.get().clear().limit(d.remaining());
                readFully(b, offset);
                d.put(b.flip());
            } else {
                readFully(d, offset);
            }
        });
    }

    @Override
    public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
        if (closed) {
            return CompletableFuture.failedFuture(closedError());
        }
        ByteBuffer s = src.duplicate();
        return submit(() -> {
            if (direct && !isAligned(s)) {
                writeFully(bounce.get().clear().put(s).flip(), offset);
            } else {
                writeFully(s, offset);
            }
            if (fua) {
                ch.force(false);
            }
        });
    }

    @Override
    public CompletableFuture<Void> flush() {
        if (closed) {
            return CompletableFuture.failedFuture(closedError());
        }
        return readOnly ? DONE : submit(() -> ch.force(false));
    }

    @Override
    public CompletableFuture<Void> trim(long offset, long length) {
        return writeZeroes(offset, length, false, false);
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
        return writeZeroes(offset, length, fua, false);
    }

    /**
     * Without noUnmap: PUNCH_HOLE, else ZERO_RANGE. With noUnmap: ZERO_RANGE, else PUNCH_HOLE
     * then an allocation of the range. Whatever the file system refuses (EOPNOTSUPP) falls back
     * to the next, and at last to writing zeros.
     */
    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua, boolean noUnmap) {
        if (closed) {
            return CompletableFuture.failedFuture(closedError());
        }
        return submit(() -> {
            if (!(noUnmap ? zeroKeepingAllocated(offset, length) : zeroUnmapping(offset, length))) {
                writeZeros(offset, length);
            }
            if (fua) {
                ch.force(false);
            }
        });
    }

    /** On an IO thread: true when the file system zeroed the range by unmapping (or zeroing) it. */
    private boolean zeroUnmapping(long offset, long length) throws IOException {
        if (fd < 0) {
            return false;
        }
        if (!noPunch && fallocated(call(() -> FileNative.punchHole(fd, offset, length)), "PUNCH_HOLE")) {
            return true;
        }
        noPunch = true;
        return zeroRange(offset, length);
    }

    /** On an IO thread: true when the file system zeroed the range and kept it allocated. */
    private boolean zeroKeepingAllocated(long offset, long length) throws IOException {
        if (fd < 0) {
            return false;
        }
        if (zeroRange(offset, length)) {
            return true;
        }
        if (noPunch || !fallocated(call(() -> FileNative.punchHole(fd, offset, length)), "PUNCH_HOLE")) {
            noPunch = true;
            return false;
        }
        // punched: allocate it again, or write zeros over the hole (which allocates as well)
        return fallocated(call(() -> FileNative.allocate(fd, offset, length)), "allocate");
    }

    private boolean zeroRange(long offset, long length) throws IOException {
        if (noZeroRange || !fallocated(call(() -> FileNative.zeroRange(fd, offset, length)), "ZERO_RANGE")) {
            noZeroRange = true;
            return false;
        }
        return true;
    }

    /** One native call on the descriptor, never after (or during) its close. */
    private int call(java.util.function.IntSupplier c) throws BlockIoException {
        fdLock.readLock().lock();
        try {
            if (closed) {
                throw closedError();
            }
            return c.getAsInt();
        } finally {
            fdLock.readLock().unlock();
        }
    }

    /** fallocate's answer: true done, false not supported here (EOPNOTSUPP), else the error. */
    private boolean fallocated(int r, String what) throws IOException {
        if (r == 0) {
            return true;
        }
        if (-r == Errno.EOPNOTSUPP) {
            return false;
        }
        if (-r == Errno.ENOSPC) {
            throw new BlockIoException(Errno.ENOSPC, name + ": fallocate " + what + ": no space left");
        }
        throw new BlockIoException(Errno.EIO, name + ": fallocate " + what + ": " + Errno.name(-r));
    }

    private void writeZeros(long offset, long length) throws IOException {
        long at = offset;
        long left = length;
        while (left > 0) {
            int n = (int) Math.min(ZERO_CHUNK, left);
            writeFully(zeros.duplicate().limit(n), at);
            at += n;
            left -= n;
        }
    }

    private boolean isAligned(ByteBuffer b) {
        return b.isDirect() && b.alignmentOffset(b.position(), lbs) == 0;
    }

    private void readFully(ByteBuffer b, long offset) throws IOException {
        long at = offset;
        while (b.hasRemaining()) {
            int n = ch.read(b, at);
            if (n < 0) {
                throw new BlockIoException(Errno.EIO, name + ": short read at " + at + " (file truncated?)");
            }
            at += n;
        }
    }

    private void writeFully(ByteBuffer b, long offset) throws IOException {
        long at = offset;
        while (b.hasRemaining()) {
            at += ch.write(b, at);
        }
    }

    private CompletableFuture<Void> submit(Io io) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                if (closed) {
                    f.completeExceptionally(closedError());
                    return;
                }
                try {
                    io.run();
                    f.complete(null);
                } catch (BlockIoException e) {
                    f.completeExceptionally(e);
                } catch (ClosedChannelException e) {
                    f.completeExceptionally(closedError());
                } catch (IOException e) {
                    f.completeExceptionally(ioError(e));
                } catch (RuntimeException e) {
                    f.completeExceptionally(new BlockIoException(Errno.EIO, name + ": " + e, e));
                }
            });
        } catch (RejectedExecutionException e) {
            f.completeExceptionally(new BlockIoException(Errno.ENODEV, "file backend is stopped"));
        }
        return f;
    }

    private BlockIoException ioError(IOException e) {
        String m = String.valueOf(e.getMessage());
        int errno = m.contains("No space left") ? Errno.ENOSPC : Errno.EIO;
        return new BlockIoException(errno, name + ": " + m, e);
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
        if (fd >= 0) {
            fdLock.writeLock().lock();
            try {
                FileNative.close(fd);
            } finally {
                fdLock.writeLock().unlock();
            }
        }
        try {
            ch.close();
        } catch (IOException e) {
            // nothing was pending that close could lose: writes complete only after write() returned
        }
        onClose.accept(this);
    }
}

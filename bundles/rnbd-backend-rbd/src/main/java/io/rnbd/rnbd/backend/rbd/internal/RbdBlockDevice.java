package io.rnbd.rnbd.backend.rbd.internal;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.Capabilities;
import io.rnbd.rnbd.api.SizeWatch;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An RBD image as a block device. Every operation is one asynchronous librbd call; direct
 * buffers go to librbd as they are, heap buffers through a direct copy. Futures complete on
 * librbd's callback thread ({@code rnbd-rbd-librbd}), never on the caller's: what depends on
 * them must not block. One thread per device (the poller, {@code rnbd-rbd-POOL/IMAGE})
 * re-reads the size when someone else changes the image's header ({@code rbd resize}), which
 * librbd's own thread may not do, and closes the image.
 *
 * <p>Closing: new IO fails with ENODEV at once; IO in flight completes with its real result
 * (librbd still owns its buffer until then, so failing it early could let a late read land in
 * memory the caller already reuses); then the image is closed and the poller ends.
 * {@link #close()} waits for that at most {@link #CLOSE_WAIT_MS}: with a cluster that does not
 * answer (and {@code op.timeout.sec=0}) the poller finishes the close when the cluster is back.
 *
 * <p>Requests arrive checked by the caller ({@link io.rnbd.rnbd.api.BlockRequests}): the
 * device itself refuses only IO after its close ({@code start}).
 */
final class RbdBlockDevice implements BlockDevice {
    static final long CLOSE_WAIT_MS = 10_000;
    private static final Logger LOG = LoggerFactory.getLogger(RbdBlockDevice.class);
    /** No secure erase (librbd has none); no fast zero: a thick (NOUNMAP) write-zeroes writes zeros in the OSDs. */
    private static final Capabilities CAPS = new Capabilities(true, true, true, true, true, true, false, false);
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);
    private static final int SECTOR = 512;
    /** How often a closing poller looks again for IO that raced the close. */
    private static final int CLOSING_POLL_MS = 100;

    /** How a FUA write is made durable: librbd's FUA op flag, or write then flush. */
    enum Fua { FLAG, FLUSH }

    /** An operation librbd has; the buffer stays reachable (librbd uses its memory) until it completes. */
    private record Pending(CompletableFuture<Void> future, int op, long offset, long length, ByteBuffer buffer,
                           Runnable onSuccess) {
        /** Built only for an error: not a string per IO. */
        String what() {
            String name = switch (op) {
                case RbdNative.OP_READ -> "read";
                case RbdNative.OP_WRITE -> "write";
                case RbdNative.OP_FLUSH -> "flush";
                case RbdNative.OP_DISCARD -> "discard";
                default -> "write-zeroes";
            };
            return name + " at " + offset + "+" + length;
        }
    }

    private final RbdImage image;
    private final String name;
    private final boolean readOnly;
    private final Fua fua;
    private final Consumer<RbdBlockDevice> onClosed;
    private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
    private final AtomicLong cookies = new AtomicLong(RbdNative.COOKIE_UPDATED);
    private final List<LongConsumer> sizeListeners = new CopyOnWriteArrayList<>();
    private final AtomicBoolean fencedLogged = new AtomicBoolean();
    private final Object lifecycle = new Object();
    private final Thread poller;
    private volatile long size;
    private volatile boolean closed;

    /**
     * @param size     the image's size now (rounded down to 512 bytes)
     * @param onClosed called once, on the poller, when the image is closed and released
     */
    RbdBlockDevice(RbdImage image, String name, long size, boolean readOnly, Fua fua,
                   Consumer<RbdBlockDevice> onClosed) {
        this.image = image;
        this.name = name;
        this.size = size - size % SECTOR;
        this.readOnly = readOnly;
        this.fua = fua;
        this.onClosed = onClosed;
        image.listen(this::completed);
        this.poller = new Thread(this::pollLoop, "rnbd-rbd-" + name);
        poller.setDaemon(true);
        poller.start();
    }

    String name() {
        return name;
    }

    Fua fuaMode() {
        return fua;
    }

    /** IO started and not yet completed. */
    int inflight() {
        return pending.size();
    }

    Thread poller() {
        return poller;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public int physicalBlockSize() {
        return 4096;
    }

    @Override
    public Capabilities capabilities() {
        return readOnly ? CAPS.readOnly() : CAPS;
    }

    @Override
    public SizeWatch watchSize(LongConsumer listener) {
        sizeListeners.add(listener);
        return () -> sizeListeners.remove(listener);
    }

    /** {@code rnbd:export-resize}: rbd_resize on the caller's thread (it waits for the cluster). */
    @Override
    public CompletableFuture<Void> resize(long bytes) {
        try {
            resizeNow(bytes);
            return DONE;
        } catch (BlockIoException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Resize the image (rbd_resize), synchronously; the new size is seen at once. */
    void resizeNow(long bytes) throws BlockIoException {
        if (closed) {
            throw closedError();
        }
        if (readOnly) {
            throw new BlockIoException(Errno.EROFS, name + " is open read-only");
        }
        if (bytes <= 0 || bytes % SECTOR != 0) {
            throw new BlockIoException(Errno.EINVAL, "size " + bytes + " is not a positive multiple of " + SECTOR);
        }
        try {
            image.resize(bytes);
        } catch (RbdException e) {
            throw new BlockIoException(e.errno(), name + ": resize to " + bytes + " failed: " + Errno.name(e.errno()));
        }
        sizeChanged(bytes);
    }

    @Override
    public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
        ByteBuffer d = dst.duplicate();
        int len = d.remaining();
        if (d.isDirect()) {
            return start(RbdNative.OP_READ, offset, len, d, 0, null);
        }
        ByteBuffer bounce = ByteBuffer.allocateDirect(len);
        return start(RbdNative.OP_READ, offset, len, bounce, 0, () -> d.put(bounce));
    }

    @Override
    public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
        ByteBuffer s = src.duplicate();
        int len = s.remaining();
        ByteBuffer b = s.isDirect() ? s : ByteBuffer.allocateDirect(len).put(s).flip();
        if (fua && this.fua == Fua.FLUSH) {
            return start(RbdNative.OP_WRITE, offset, len, b, 0, null).thenCompose(v -> flush());
        }
        return start(RbdNative.OP_WRITE, offset, len, b, fua ? RbdNative.FLAG_FUA : 0, null);
    }

    @Override
    public CompletableFuture<Void> flush() {
        if (closed) {
            return CompletableFuture.failedFuture(closedError());
        }
        return readOnly ? DONE : start(RbdNative.OP_FLUSH, 0, 0, null, 0, null);
    }

    @Override
    public CompletableFuture<Void> trim(long offset, long length) {
        return start(RbdNative.OP_DISCARD, offset, length, null, 0, null);
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
        return writeZeroes(offset, length, fua, false);
    }

    /**
     * rbd_aio_write_zeroes: without noUnmap librbd may deallocate the range (as a discard
     * that reads back zeros), with it (RNBD's NOUNMAP) RBD_WRITE_ZEROES_FLAG_THICK_PROVISION
     * keeps it allocated, the OSDs writing the zeros.
     */
    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua, boolean noUnmap) {
        int thick = noUnmap ? RbdNative.FLAG_THICK : 0;
        if (fua && this.fua == Fua.FLUSH) {
            return start(RbdNative.OP_WRITE_ZEROES, offset, length, null, thick, null).thenCompose(v -> flush());
        }
        return start(RbdNative.OP_WRITE_ZEROES, offset, length, null, thick | (fua ? RbdNative.FLAG_FUA : 0), null);
    }

    /**
     * Registers the operation before looking at {@code closed}, and the closing poller looks
     * at {@code closed} before {@code pending}: an operation that saw the device open is
     * always waited for, so the image is never closed under a submission.
     */
    private CompletableFuture<Void> start(int op, long offset, long length, ByteBuffer buf, int flags,
                                          Runnable onSuccess) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        long cookie = cookies.incrementAndGet();
        Pending p = new Pending(f, op, offset, length, buf, onSuccess);
        pending.put(cookie, p);
        if (closed) {
            pending.remove(cookie);
            f.completeExceptionally(closedError());
            return f;
        }
        int r = image.submit(op, cookie, offset, length, buf, flags);
        if (r < 0) {
            pending.remove(cookie);
            f.completeExceptionally(ioError(-r, p.what()));
        }
        return f;
    }

    private void pollLoop() {
        long[] events = new long[128];
        try {
            while (!(closed && pending.isEmpty())) {
                int n = image.poll(events, closed ? CLOSING_POLL_MS : -1);
                for (int i = 0; i < n; i++) {
                    dispatch(events[2 * i], events[2 * i + 1]);
                }
            }
            synchronized (lifecycle) {
                // close() has finished waking this thread: nothing touches the image after this
            }
            try {
                image.close();
            } catch (RbdException e) {
                LOG.warn("{}: close: {}", name, e.getMessage());
            }
            // completions that took the poll road meanwhile (none are expected: nothing is pending)
            for (int n; (n = image.poll(events, 0)) > 0; ) {
                for (int i = 0; i < n; i++) {
                    if (events[2 * i] != RbdNative.COOKIE_UPDATED) {
                        dispatch(events[2 * i], events[2 * i + 1]);
                    }
                }
            }
            image.free();
            LOG.info("{}: closed", name);
        } catch (RuntimeException | Error e) {
            // IO in flight still completes through librbd's callbacks; failing it here could let
            // librbd write into buffers their owners already reuse. The image stays open: a bug.
            LOG.error("{}: its thread failed with {} IOs in flight; size changes go unseen, the image is not "
                    + "closed", name, pending.size(), e);
        } finally {
            onClosed.accept(this);
        }
    }

    /** On librbd's thread: nothing may escape into it. */
    private void completed(long cookie, long result) {
        try {
            dispatch(cookie, result);
        } catch (RuntimeException | Error e) {
            LOG.error("{}: completion of request {} failed", name, cookie, e);
        }
    }

    private void dispatch(long cookie, long result) {
        if (cookie == RbdNative.COOKIE_UPDATED) {
            refreshSize();
            return;
        }
        Pending p = pending.remove(cookie);
        if (p == null) {
            LOG.warn("{}: completion for unknown request {} dropped", name, cookie);
            return;
        }
        if (result < 0) {
            p.future().completeExceptionally(ioError((int) -result, p.what()));
            return;
        }
        try {
            if (p.onSuccess() != null) {
                p.onSuccess().run();
            }
            p.future().complete(null);
        } catch (RuntimeException e) {
            p.future().completeExceptionally(new BlockIoException(Errno.EIO, name + ": " + p.what() + ": " + e, e));
        }
    }

    /** The header changed (resize, snapshot, lock, features): the size may have. */
    private void refreshSize() {
        if (closed) {
            return;
        }
        try {
            sizeChanged(image.size());
        } catch (RbdException e) {
            LOG.warn("{}: cannot re-read the size after a header change: {}", name, e.getMessage());
        }
    }

    private void sizeChanged(long bytes) {
        long now = bytes - bytes % SECTOR;
        long before;
        synchronized (lifecycle) {
            before = size;
            size = now;
        }
        if (before == now) {
            return;
        }
        LOG.info("{}: size changed from {} to {} bytes", name, before, now);
        for (LongConsumer l : sizeListeners) {
            try {
                l.accept(now);
            } catch (RuntimeException e) {
                LOG.warn("{}: size listener failed: {}", name, e.toString());
            }
        }
    }

    private BlockIoException ioError(int errno, String what) {
        String why = switch (errno) {
            case Errno.ETIMEDOUT -> " (no answer from the cluster within op.timeout.sec)";
            case Errno.ESHUTDOWN -> " (fenced: another client took the image's exclusive lock and blocklisted this one)";
            case Errno.EROFS -> " (another client holds the image's exclusive lock)";
            default -> "";
        };
        if (errno == Errno.ESHUTDOWN && fencedLogged.compareAndSet(false, true)) {
            LOG.warn("{}: this client is blocklisted: another client took the image over; every IO now fails",
                    name);
        }
        return new BlockIoException(errno, name + ": " + what + " failed" + why);
    }

    private static BlockIoException closedError() {
        return new BlockIoException(Errno.ENODEV, "device is closed");
    }

    /** Stop taking IO and let the poller close the image once IO in flight is done; returns at once. */
    void beginClose() {
        synchronized (lifecycle) {
            if (closed) {
                return;
            }
            closed = true;
            image.wakeup();
        }
    }

    /** Waits until the image is closed, at most until {@code deadlineNanos} ({@link System#nanoTime()}). */
    boolean awaitClosed(long deadlineNanos) {
        long left = deadlineNanos - System.nanoTime();
        try {
            if (left > 0) {
                poller.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (poller.isAlive()) {
            LOG.warn("{}: the cluster does not answer; {} IOs still in flight, the image is closed when they "
                    + "complete", name, pending.size());
            return false;
        }
        return true;
    }

    @Override
    public void close() {
        beginClose();
        if (Thread.currentThread() != poller) {
            awaitClosed(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_WAIT_MS));
        }
    }
}

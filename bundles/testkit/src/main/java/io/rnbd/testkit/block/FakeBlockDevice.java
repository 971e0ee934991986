package io.rnbd.testkit.block;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockPlug;
import io.rnbd.rnbd.api.Capabilities;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A block device in a byte array, for tests of what sits above a device (the RNBD server, the
 * NBD gateway, the load generator): it checks every request as a strict device would (EINVAL,
 * EROFS, ENODEV once closed), counts what reaches it, and lets a test fail it, hold its
 * requests back, or complete them on other threads. Thread-safe.
 *
 * <p>Configured before use, fluently: {@code new FakeBlockDevice(1 << 20).completingOn(pool)}.
 * Devices made over the same array ({@link #FakeBlockDevice(byte[])}) share their data, as
 * the opens of one export do.
 */
public final class FakeBlockDevice implements BlockDevice {
    /** Every capability. */
    public static final Capabilities ALL = new Capabilities(true, true, true, true, true, true, true, true);

    private final byte[] store;
    private volatile Capabilities caps = ALL;
    private volatile int maxIo = 128 * 1024;
    private volatile boolean maxIoForEveryRequest;
    private volatile Executor completer;

    private final AtomicInteger flushes = new AtomicInteger();
    private final AtomicInteger fuaWrites = new AtomicInteger();
    private final AtomicInteger trims = new AtomicInteger();
    private final AtomicInteger zeroes = new AtomicInteger();
    private final AtomicInteger noUnmapZeroes = new AtomicInteger();
    private final AtomicInteger secureErases = new AtomicInteger();
    private final AtomicLong ops = new AtomicLong();
    private final AtomicInteger largestIo = new AtomicInteger();
    private final List<Integer> plugged = Collections.synchronizedList(new ArrayList<>());
    private final ThreadLocal<int[]> plugCount = new ThreadLocal<>();
    private final List<Runnable> held = new ArrayList<>();
    private boolean holding;
    private volatile int failWith;
    private volatile boolean closed;

    /** A zeroed device of {@code size} bytes. */
    public FakeBlockDevice(int size) {
        this(new byte[size]);
    }

    /** A device over {@code store}: its size, and its data shared with every device over it. */
    public FakeBlockDevice(byte[] store) {
        this.store = store;
    }

    // ---- configuration

    public FakeBlockDevice withCapabilities(Capabilities capabilities) {
        this.caps = capabilities;
        return this;
    }

    /** Read-only: capabilities as {@link Capabilities#readOnly()}, every change refused with EROFS. */
    public FakeBlockDevice readOnly() {
        return withCapabilities(caps.readOnly());
    }

    /** The largest READ or WRITE it takes (EINVAL beyond); 128 KiB unless set. */
    public FakeBlockDevice withMaxIoSize(int bytes) {
        this.maxIo = bytes;
        return this;
    }

    /**
     * Refuse a trim or write-zeroes longer than {@link #maxIoSize()} too (EINVAL), which a
     * device may take at any length: for callers that promise to split every request to the
     * device's limit, as the NBD gateway does.
     */
    public FakeBlockDevice limitingEveryRequest() {
        this.maxIoForEveryRequest = true;
        return this;
    }

    /**
     * Run every request (its checks and its effect) on {@code executor}, like a device that
     * completes on its own threads; without one, in the submitting thread. An executor that
     * only keeps the tasks lets the test run them when it wants.
     */
    public FakeBlockDevice completingOn(Executor executor) {
        this.completer = executor;
        return this;
    }

    // ---- what a test does to it

    /** Fail every request from now on with {@code errno}; 0 to stop. */
    public void failWith(int errno) {
        this.failWith = errno;
    }

    /** Hold every request from now on, unanswered, until {@link #release()}. */
    public synchronized void hold() {
        holding = true;
    }

    /** Stop holding, and run the requests held so far, in order, in this thread. */
    public void release() {
        List<Runnable> run;
        synchronized (this) {
            holding = false;
            run = new ArrayList<>(held);
            held.clear();
        }
        run.forEach(Runnable::run);
    }

    // ---- what a test reads from it

    /** How many requests are held ({@link #hold()}). */
    public synchronized int heldCount() {
        return held.size();
    }

    /** A copy of {@code length} bytes at {@code offset}. */
    public byte[] snapshot(int offset, int length) {
        synchronized (store) {
            return Arrays.copyOfRange(store, offset, offset + length);
        }
    }

    public boolean isClosed() {
        return closed;
    }

    /** Requests submitted, whatever became of them. */
    public long ops() {
        return ops.get();
    }

    /** The longest request submitted, in bytes. */
    public int largestIo() {
        return largestIo.get();
    }

    /** Flushes done. */
    public int flushes() {
        return flushes.get();
    }

    /** Writes done with FUA. */
    public int fuaWrites() {
        return fuaWrites.get();
    }

    public int trims() {
        return trims.get();
    }

    /** WRITE_ZEROES done, with or without noUnmap. */
    public int writeZeroes() {
        return zeroes.get();
    }

    /** WRITE_ZEROES done with noUnmap (the range to stay allocated). */
    public int noUnmapZeroes() {
        return noUnmapZeroes.get();
    }

    public int secureErases() {
        return secureErases.get();
    }

    /** How many requests each plug held, in the order the plugs closed. */
    public List<Integer> plugged() {
        return plugged;
    }

    // ---- BlockDevice

    @Override
    public long size() {
        return store.length;
    }

    @Override
    public int maxIoSize() {
        return maxIo;
    }

    @Override
    public Capabilities capabilities() {
        return caps;
    }

    @Override
    public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
        int len = dst.remaining();
        return submit(offset, len, false, true, () -> {
            synchronized (store) {
                dst.duplicate().put(store, (int) offset, len);
            }
        });
    }

    @Override
    public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
        int len = src.remaining();
        return submit(offset, len, true, true, () -> {
            synchronized (store) {
                src.duplicate().get(store, (int) offset, len);
            }
            if (fua) {
                fuaWrites.incrementAndGet();
            }
        });
    }

    @Override
    public CompletableFuture<Void> flush() {
        return submit(0, 0, false, false, flushes::incrementAndGet);
    }

    @Override
    public CompletableFuture<Void> trim(long offset, long length) {
        return submit(offset, length, true, false, () -> {
            zero(offset, length);
            trims.incrementAndGet();
        });
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
        return submit(offset, length, true, false, () -> {
            zero(offset, length);
            zeroes.incrementAndGet();
        });
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua, boolean noUnmap) {
        return submit(offset, length, true, false, () -> {
            zero(offset, length);
            zeroes.incrementAndGet();
            if (noUnmap) {
                noUnmapZeroes.incrementAndGet();
            }
        });
    }

    /** EOPNOTSUPP unless the capabilities say {@code secureErase}. */
    @Override
    public CompletableFuture<Void> secureErase(long offset, long length) {
        if (!caps.secureErase()) {
            return BlockDevice.super.secureErase(offset, length);
        }
        return submit(offset, length, true, false, () -> {
            zero(offset, length);
            secureErases.incrementAndGet();
        });
    }

    private void zero(long offset, long length) {
        synchronized (store) {
            Arrays.fill(store, (int) offset, (int) (offset + length), (byte) 0);
        }
    }

    /** Takes requests submitted in this thread until closed, and records how many ({@link #plugged()}). */
    @Override
    public BlockPlug plug() {
        if (plugCount.get() != null) {
            return BlockPlug.NONE;
        }
        int[] n = {0};
        plugCount.set(n);
        return () -> {
            if (plugCount.get() == n) {
                plugCount.remove();
                plugged.add(n[0]);
            }
        };
    }

    @Override
    public void close() {
        closed = true;
    }

    private CompletableFuture<Void> submit(long offset, long length, boolean change, boolean data, Runnable effect) {
        ops.incrementAndGet();
        int[] plug = plugCount.get();
        if (plug != null) {
            plug[0]++;
        }
        largestIo.accumulateAndGet((int) Math.min(Integer.MAX_VALUE, length), Math::max);
        CompletableFuture<Void> f = new CompletableFuture<>();
        Runnable run = () -> {
            Executor e = completer;
            if (e == null) {
                execute(offset, length, change, data, effect, f);
            } else {
                e.execute(() -> execute(offset, length, change, data, effect, f));
            }
        };
        synchronized (this) {
            if (holding) {
                held.add(run);
                return f;
            }
        }
        run.run();
        return f;
    }

    /** The checks, made when the request runs (a device closed meanwhile refuses it), then the effect. */
    private void execute(long offset, long length, boolean change, boolean data, Runnable effect,
                         CompletableFuture<Void> f) {
        BlockIoException refused = refusal(offset, length, change, data);
        if (refused != null) {
            f.completeExceptionally(refused);
            return;
        }
        effect.run();
        f.complete(null);
    }

    private BlockIoException refusal(long offset, long length, boolean change, boolean data) {
        if (closed) {
            return new BlockIoException(Errno.ENODEV, "device closed");
        }
        int errno = failWith;
        if (errno != 0) {
            return new BlockIoException(errno, "injected failure");
        }
        if (offset < 0 || length < 0 || offset + length > store.length || offset % logicalBlockSize() != 0
                || length % logicalBlockSize() != 0 || (data || maxIoForEveryRequest) && length > maxIo) {
            return new BlockIoException(Errno.EINVAL, "bad range " + offset + "+" + length);
        }
        if (change && !caps.write()) {
            return new BlockIoException(Errno.EROFS, "read-only");
        }
        return null;
    }
}

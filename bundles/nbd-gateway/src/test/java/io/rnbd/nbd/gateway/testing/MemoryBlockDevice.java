package io.rnbd.nbd.gateway.testing;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.Capabilities;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A simple synchronized in-memory device for tests. With an executor it completes every
 * operation on that executor's threads (like a real device), else in the caller's thread.
 */
public final class MemoryBlockDevice implements BlockDevice {
    private final ByteBuffer data;
    private final Capabilities caps;
    private final Executor completer;
    private final int maxIo;
    public final AtomicInteger flushes = new AtomicInteger();
    public final AtomicInteger fuaWrites = new AtomicInteger();
    public final AtomicInteger trims = new AtomicInteger();
    public final AtomicInteger zeroes = new AtomicInteger();
    public final AtomicLong ops = new AtomicLong();
    public final AtomicInteger largestIo = new AtomicInteger();
    public volatile boolean closed;
    /** How many operations each plug held, in the order the plugs closed. */
    public final java.util.List<Integer> plugged = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    private final ThreadLocal<int[]> plugCount = new ThreadLocal<>();
    /** When set, every operation fails with this errno. */
    public volatile int failWith;

    public MemoryBlockDevice(int size, Capabilities caps, Executor completer) {
        this(size, caps, completer, 128 * 1024);
    }

    public MemoryBlockDevice(int size, Capabilities caps, Executor completer, int maxIo) {
        this.data = ByteBuffer.allocate(size);
        this.caps = caps;
        this.completer = completer;
        this.maxIo = maxIo;
    }

    public static Capabilities allCaps() {
        return new Capabilities(true, true, true, true, true, true);
    }

    @Override
    public long size() {
        return data.capacity();
    }

    @Override
    public int maxIoSize() {
        return maxIo;
    }

    @Override
    public Capabilities capabilities() {
        return caps;
    }

    /** A copy of the bytes at {@code offset}. */
    public synchronized byte[] snapshot(int offset, int length) {
        byte[] b = new byte[length];
        data.get(offset, b);
        return b;
    }

    @Override
    public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
        return run(offset, dst.remaining(), false, () -> {
            synchronized (this) {
                dst.duplicate().put(data.slice((int) offset, dst.remaining()));
            }
        });
    }

    @Override
    public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
        return run(offset, src.remaining(), true, () -> {
            synchronized (this) {
                data.put((int) offset, src.duplicate(), src.position(), src.remaining());
            }
            if (fua) {
                fuaWrites.incrementAndGet();
            }
        });
    }

    @Override
    public CompletableFuture<Void> flush() {
        return run(0, 0, false, flushes::incrementAndGet);
    }

    @Override
    public CompletableFuture<Void> trim(long offset, long length) {
        return run(offset, length, true, () -> {
            zero(offset, length);
            trims.incrementAndGet();
        });
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
        return run(offset, length, true, () -> {
            zero(offset, length);
            zeroes.incrementAndGet();
        });
    }

    private synchronized void zero(long offset, long length) {
        for (long i = offset; i < offset + length; i++) {
            data.put((int) i, (byte) 0);
        }
    }

    @Override
    public io.rnbd.rnbd.api.BlockPlug plug() {
        if (plugCount.get() != null) {
            return io.rnbd.rnbd.api.BlockPlug.NONE;
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

    private CompletableFuture<Void> run(long offset, long length, boolean writes, Runnable op) {
        ops.incrementAndGet();
        int[] held = plugCount.get();
        if (held != null) {
            held[0]++;
        }
        largestIo.accumulateAndGet((int) Math.min(Integer.MAX_VALUE, length), Math::max);
        Runnable checked = () -> {
            if (closed) {
                throw new IllegalStateException(new BlockIoException(Errno.ENODEV, "device closed"));
            }
            if (failWith != 0) {
                throw new IllegalStateException(new BlockIoException(failWith, "injected failure"));
            }
            if (offset < 0 || length < 0 || offset + length > data.capacity() || offset % 512 != 0
                    || length % 512 != 0 || length > maxIo) {
                throw new IllegalStateException(new BlockIoException(Errno.EINVAL, "bad range " + offset + "+" + length));
            }
            if (writes && !caps.write()) {
                throw new IllegalStateException(new BlockIoException(Errno.EROFS, "read-only"));
            }
            op.run();
        };
        if (completer == null) {
            try {
                checked.run();
                return CompletableFuture.completedFuture(null);
            } catch (IllegalStateException e) {
                return CompletableFuture.failedFuture(e.getCause());
            }
        }
        CompletableFuture<Void> f = new CompletableFuture<>();
        completer.execute(() -> {
            try {
                checked.run();
                f.complete(null);
            } catch (IllegalStateException e) {
                f.completeExceptionally(e.getCause());
            }
        });
        return f;
    }

    @Override
    public void close() {
        closed = true;
    }
}

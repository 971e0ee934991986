package io.rnbd.rnbd.server;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.Capabilities;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * A test block device over a shared byte array. {@link #hold()} parks every operation
 * until {@link #release()}, so tests can keep IO in flight.
 */
public final class MemBlockDevice implements BlockDevice {
    private final byte[] store;
    private final boolean readOnly;
    private final int maxIo;
    private final List<Runnable> held = new ArrayList<>();
    private boolean holding;
    private volatile boolean closed;
    private volatile int flushes;

    public MemBlockDevice(byte[] store, boolean readOnly, int maxIo) {
        this.store = store;
        this.readOnly = readOnly;
        this.maxIo = maxIo;
    }

    public MemBlockDevice(int size) {
        this(new byte[size], false, 128 * 1024);
    }

    public synchronized void hold() {
        holding = true;
    }

    public void release() {
        List<Runnable> run;
        synchronized (this) {
            holding = false;
            run = new ArrayList<>(held);
            held.clear();
        }
        run.forEach(Runnable::run);
    }

    public synchronized int heldCount() {
        return held.size();
    }

    public boolean isClosed() {
        return closed;
    }

    public int flushes() {
        return flushes;
    }

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
        Capabilities rw = new Capabilities(true, true, true, true, true, true);
        return readOnly ? rw.readOnly() : rw;
    }

    private CompletableFuture<Void> op(long offset, long len, boolean write, Runnable body) {
        Supplier<CompletableFuture<Void>> run = () -> {
            if (closed) {
                return CompletableFuture.failedFuture(new BlockIoException(Errno.EIO, "closed"));
            }
            if (write && readOnly) {
                return CompletableFuture.failedFuture(new BlockIoException(Errno.EROFS, "read-only"));
            }
            if (offset < 0 || len < 0 || offset + len > store.length || offset % 512 != 0 || len % 512 != 0) {
                return CompletableFuture.failedFuture(new BlockIoException(Errno.EINVAL, "range"));
            }
            synchronized (store) {
                body.run();
            }
            return CompletableFuture.completedFuture(null);
        };
        synchronized (this) {
            if (holding) {
                CompletableFuture<Void> f = new CompletableFuture<>();
                held.add(() -> run.get().whenComplete((v, t) -> {
                    if (t != null) {
                        f.completeExceptionally(t);
                    } else {
                        f.complete(null);
                    }
                }));
                return f;
            }
        }
        return run.get();
    }

    @Override
    public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
        int len = dst.remaining();
        return op(offset, len, false, () -> dst.duplicate().put(store, (int) offset, len));
    }

    @Override
    public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
        int len = src.remaining();
        return op(offset, len, true, () -> src.duplicate().get(store, (int) offset, len));
    }

    @Override
    public CompletableFuture<Void> flush() {
        return op(0, 0, false, () -> flushes++);
    }

    @Override
    public CompletableFuture<Void> trim(long offset, long length) {
        return writeZeroes(offset, length, false);
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
        return op(offset, length, true, () -> java.util.Arrays.fill(store, (int) offset, (int) (offset + length), (byte) 0));
    }

    @Override
    public void close() {
        closed = true;
    }
}

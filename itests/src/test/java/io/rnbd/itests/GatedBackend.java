package io.rnbd.itests;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.Capabilities;

/**
 * A backend the test can hold: the memory backend's devices behind a gate. While the gate is
 * closed every read and write waits at the server, so the requests in flight on each client
 * path stay exactly where they are and can be counted; a path killed then must fail over
 * exactly those (the soak checks the failover counters against that count). Opening the gate
 * lets everything held go on, in arrival order. Registered by the test as
 * {@code rnbd.backend=itest-gated}.
 */
final class GatedBackend implements BlockBackend {

    static final String TYPE = "itest-gated";

    private final BlockBackend memory;
    /** Guarded by itself: what waits while the gate is closed, null while it is open. */
    private final Object lock = new Object();
    private List<Runnable> held;

    GatedBackend(BlockBackend memory) {
        this.memory = memory;
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public BlockDevice open(Map<String, String> params, boolean readOnly) throws IOException {
        return new Gated(memory.open(params, readOnly));
    }

    void close() {
        synchronized (lock) {
            if (held == null) {
                held = new ArrayList<>();
            }
        }
    }

    void open() {
        List<Runnable> go;
        synchronized (lock) {
            go = held;
            held = null;
        }
        if (go != null) {
            go.forEach(Runnable::run);
        }
    }

    /** Requests waiting at the closed gate. */
    int held() {
        synchronized (lock) {
            return held == null ? 0 : held.size();
        }
    }

    private CompletableFuture<Void> through(Supplier<CompletableFuture<Void>> op) {
        synchronized (lock) {
            if (held != null) {
                CompletableFuture<Void> later = new CompletableFuture<>();
                held.add(() -> op.get().whenComplete((v, t) -> {
                    if (t != null) {
                        later.completeExceptionally(t);
                    } else {
                        later.complete(v);
                    }
                }));
                return later;
            }
        }
        return op.get();
    }

    private final class Gated implements BlockDevice {
        private final BlockDevice device;

        Gated(BlockDevice device) {
            this.device = device;
        }

        @Override
        public long size() {
            return device.size();
        }

        @Override
        public int logicalBlockSize() {
            return device.logicalBlockSize();
        }

        @Override
        public int physicalBlockSize() {
            return device.physicalBlockSize();
        }

        @Override
        public int maxIoSize() {
            return device.maxIoSize();
        }

        @Override
        public Capabilities capabilities() {
            return device.capabilities();
        }

        @Override
        public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
            return through(() -> device.read(offset, dst));
        }

        @Override
        public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
            return through(() -> device.write(offset, src, fua));
        }

        @Override
        public CompletableFuture<Void> flush() {
            return through(device::flush);
        }

        @Override
        public CompletableFuture<Void> trim(long offset, long length) {
            return through(() -> device.trim(offset, length));
        }

        @Override
        public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
            return through(() -> device.writeZeroes(offset, length, fua));
        }

        @Override
        public void close() {
            device.close();
        }
    }
}

package io.rnbd.loadgen;

import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.testkit.block.ForwardingBlockDevice;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** Runs every IO on a small pool, like a remote device completing on its transport threads. */
class AsyncDevice extends ForwardingBlockDevice {
    private final ExecutorService pool = Executors.newFixedThreadPool(3);
    private final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger maxInFlight = new AtomicInteger();

    AsyncDevice(BlockDevice next) {
        super(next);
    }

    private CompletableFuture<Void> async(java.util.function.Supplier<CompletableFuture<Void>> io) {
        maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
        return CompletableFuture.supplyAsync(io, pool).thenCompose(f -> f)
                .whenComplete((v, t) -> inFlight.decrementAndGet());
    }

    @Override
    public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
        return async(() -> next.read(offset, dst));
    }

    @Override
    public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
        return async(() -> next.write(offset, src, fua));
    }

    @Override
    public void close() {
        pool.shutdown();
        try {
            pool.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        super.close();
    }
}

package io.rnbd.rnbd.api;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * WRITE_ZEROES that keeps the range allocated, for a device with no such zeroing of its own
 * ({@link BlockDevice#writeZeroes(long, long, boolean, boolean)}): zero buffers written in
 * pieces of the device's largest IO, one after the other, so a large range costs one buffer
 * and one request in flight. A device that completes inline (memory) is looped over, not
 * recursed into.
 */
final class ZeroWriter {
    private final BlockDevice device;
    private final ByteBuffer zeros;
    private final long end;
    private final boolean fua;
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    private ZeroWriter(BlockDevice device, ByteBuffer zeros, long end, boolean fua) {
        this.device = device;
        this.zeros = zeros;
        this.end = end;
        this.fua = fua;
    }

    static CompletableFuture<Void> write(BlockDevice d, long offset, long length, boolean fua) {
        if (length <= 0) {
            return CompletableFuture.completedFuture(null);
        }
        int lbs = d.logicalBlockSize();
        int piece = (int) Math.min(length, Math.max(lbs, d.maxIoSize() / lbs * lbs));
        ZeroWriter w = new ZeroWriter(d, ByteBuffer.allocateDirect(piece).asReadOnlyBuffer(), offset + length, fua);
        w.from(offset);
        return w.done;
    }

    private void from(long at) {
        while (at < end) {
            int n = (int) Math.min(zeros.capacity(), end - at);
            CompletableFuture<Void> f = device.write(at, zeros.duplicate().limit(n), fua);
            long next = at + n;
            if (!f.isDone() || f.isCompletedExceptionally()) {
                f.whenComplete((v, e) -> {
                    if (e != null) {
                        done.completeExceptionally(e);
                    } else {
                        from(next);
                    }
                });
                return;
            }
            at = next;
        }
        done.complete(null);
    }
}

package io.rnbd.nbd.gateway.internal;

import java.util.concurrent.CompletableFuture;

/**
 * Runs a range operation as chunks of at most the device's maximum IO size, a few at a time,
 * so a 32 MiB NBD request or a huge trim never floods the device's queue. Chunks that complete
 * synchronously do not recurse: one thread at a time pumps, the others just report.
 */
final class Splitter {
    /** One chunk: the device op at {@code offset} for {@code length} bytes, {@code pos} bytes into the request. */
    interface ChunkOp {
        CompletableFuture<Void> run(long offset, int length, long pos);
    }

    static final int WINDOW = 8;

    private final long offset;
    private final long length;
    private final int chunk;
    private final ChunkOp op;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private long next;
    private int running;
    private boolean pumping;
    private boolean finished;
    private Throwable failure;

    private Splitter(long offset, long length, int chunk, ChunkOp op) {
        this.offset = offset;
        this.length = length;
        this.chunk = chunk;
        this.op = op;
    }

    static CompletableFuture<Void> run(long offset, long length, int chunk, ChunkOp op) {
        if (length <= chunk) {
            return start(op, offset, (int) length, 0);
        }
        Splitter s = new Splitter(offset, length, chunk, op);
        synchronized (s) {
            s.pumping = true;
        }
        s.pump();
        return s.done;
    }

    private static CompletableFuture<Void> start(ChunkOp op, long offset, int length, long pos) {
        try {
            return op.run(offset, length, pos);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private void chunkDone(Throwable t) {
        synchronized (this) {
            running--;
            if (t != null && failure == null) {
                failure = t;
            }
            if (pumping) {
                return;
            }
            pumping = true;
        }
        pump();
    }

    private void pump() {
        while (true) {
            long pos = 0;
            int len = 0;
            Throwable result = null;
            boolean finish = false;
            synchronized (this) {
                boolean noMore = failure != null || next >= length;
                if (noMore || running >= WINDOW) {
                    pumping = false;
                    if (!noMore || running > 0 || finished) {
                        return;
                    }
                    finished = true;
                    finish = true;
                    result = failure;
                } else {
                    pos = next;
                    len = (int) Math.min(chunk, length - pos);
                    next += len;
                    running++;
                }
            }
            if (finish) {
                if (result != null) {
                    done.completeExceptionally(result);
                } else {
                    done.complete(null);
                }
                return;
            }
            start(op, offset + pos, len, pos).whenComplete((v, t) -> chunkDone(t));
        }
    }
}

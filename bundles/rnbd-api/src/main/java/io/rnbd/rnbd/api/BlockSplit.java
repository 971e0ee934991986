package io.rnbd.rnbd.api;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * A request cut into pieces a device takes, as Linux's block layer splits a bio to its
 * queue's limits ({@code bio_split_to_limits}): pieces of at most {@code max} bytes, in order,
 * the last one shorter. The one place the client (a request cut to the session's max IO), the
 * server (a READ or WRITE larger than its device takes), the NBD gateway (a 32 MiB NBD request)
 * and {@link BlockDevice#writeZeroes(long, long, boolean, boolean)}'s zero buffers cut a range.
 *
 * <p>{@link #forEach} only cuts, for a caller that tracks its pieces itself (the client's
 * requests count pieces, plugged, under the device's state machine); {@link #run} also runs
 * them and completes when they have.
 */
public final class BlockSplit {
    /** One piece: {@code length} bytes at {@code offset}, {@code pos} bytes into the request. */
    @FunctionalInterface
    public interface Piece {
        void accept(long offset, int length, long pos);
    }

    /** The device operation on one piece: {@code length} bytes at {@code offset}, {@code pos} into the request. */
    @FunctionalInterface
    public interface PieceOp {
        CompletableFuture<Void> run(long offset, int length, long pos);
    }

    /** No bound on the pieces in flight: every piece is started at once. */
    public static final int ALL = Integer.MAX_VALUE;

    private BlockSplit() {
    }

    /**
     * The largest piece a device of {@code maxIoSize} and {@code logicalBlockSize} takes that
     * keeps every piece aligned: {@code maxIoSize} rounded down to the block, at least one block.
     */
    public static int maxPiece(int maxIoSize, int logicalBlockSize) {
        if (logicalBlockSize <= 0) {
            throw new IllegalArgumentException("logical block size must be positive: " + logicalBlockSize);
        }
        return Math.max(logicalBlockSize, maxIoSize - maxIoSize % logicalBlockSize);
    }

    /** How many pieces of at most {@code max} bytes {@code length} bytes make: 0 for 0. */
    public static int pieces(long length, int max) {
        check(length, max);
        long n = (length + max - 1) / max;
        if (n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(length + " bytes in pieces of " + max + " are too many pieces");
        }
        return (int) n;
    }

    /** Hand {@code piece} every piece of the range, in order, on this thread; nothing for a length of 0. */
    public static void forEach(long offset, long length, int max, Piece piece) {
        check(length, max);
        for (long pos = 0; pos < length; pos += max) {
            piece.accept(offset + pos, (int) Math.min(max, length - pos), pos);
        }
    }

    /**
     * The {@code length} bytes {@code pos} bytes past {@code buf}'s position, as a buffer of
     * their own (position 0, limit {@code length}, the same memory, read-only if {@code buf}
     * is). {@code buf}'s position and limit stay as they were, so each piece's device may move
     * its own buffer as it reads or writes.
     */
    public static ByteBuffer slice(ByteBuffer buf, long pos, int length) {
        if (pos < 0 || length < 0 || pos > buf.remaining() - (long) length) {
            throw new IndexOutOfBoundsException("piece " + pos + "+" + length + " of " + buf.remaining() + " bytes");
        }
        return buf.slice(buf.position() + (int) pos, length);
    }

    /**
     * Run {@code op} on every piece of the range, at most {@code window} of them in flight
     * ({@link #ALL}: all at once), in order. The result completes when every piece started has
     * completed: normally if all did, else with the first failure seen (an exception {@code op}
     * throws counts as its piece's failure); once a piece has failed, no further piece is
     * started, and the result waits for those already running, so a caller may reuse the
     * request's buffer as soon as it completes. A range of at most {@code max} bytes is one
     * call of {@code op}, whose future is the result; a length of 0 calls nothing. Pieces that
     * complete on the calling thread are looped over, not recursed into: one thread at a time
     * starts pieces, the others only report.
     */
    public static CompletableFuture<Void> run(long offset, long length, int max, int window, PieceOp op) {
        check(length, max);
        if (window < 1) {
            throw new IllegalArgumentException("window must be at least 1: " + window);
        }
        if (length == 0) {
            return CompletableFuture.completedFuture(null);
        }
        if (length <= max) {
            return start(op, offset, (int) length, 0);
        }
        Pump p = new Pump(offset, length, max, window, op);
        synchronized (p) {
            p.pumping = true;
        }
        p.pump();
        return p.done;
    }

    private static void check(long length, int max) {
        if (length < 0) {
            throw new IllegalArgumentException("negative length " + length);
        }
        if (max <= 0) {
            throw new IllegalArgumentException("piece size must be positive: " + max);
        }
    }

    private static CompletableFuture<Void> start(PieceOp op, long offset, int length, long pos) {
        try {
            CompletableFuture<Void> f = op.run(offset, length, pos);
            return f != null ? f : CompletableFuture.failedFuture(
                    new NullPointerException("piece " + offset + "+" + length + " gave no future"));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** The pieces of one {@link #run} beyond the first. */
    private static final class Pump {
        private final long offset;
        private final long length;
        private final int max;
        private final int window;
        private final PieceOp op;
        private final CompletableFuture<Void> done = new CompletableFuture<>();
        private long next;
        private int running;
        private boolean pumping;
        private boolean finished;
        private Throwable failure;

        Pump(long offset, long length, int max, int window, PieceOp op) {
            this.offset = offset;
            this.length = length;
            this.max = max;
            this.window = window;
            this.op = op;
        }

        private void pieceDone(Throwable t) {
            synchronized (this) {
                running--;
                if (t != null && failure == null) {
                    failure = t;
                }
                if (pumping) {
                    return; // the pumping thread sees it in its next round
                }
                pumping = true;
            }
            pump();
        }

        void pump() {
            while (true) {
                long pos = 0;
                int len = 0;
                Throwable result = null;
                boolean finish = false;
                synchronized (this) {
                    boolean noMore = failure != null || next >= length;
                    if (noMore || running >= window) {
                        pumping = false;
                        if (!noMore || running > 0 || finished) {
                            return;
                        }
                        finished = true;
                        finish = true;
                        result = failure;
                    } else {
                        pos = next;
                        len = (int) Math.min(max, length - pos);
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
                start(op, offset + pos, len, pos).whenComplete((v, t) -> pieceDone(t));
            }
        }
    }
}

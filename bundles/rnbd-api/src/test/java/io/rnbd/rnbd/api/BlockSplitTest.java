package io.rnbd.rnbd.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The cutting, the buffer views and the running of pieces, as the client, server and gateway rely on them. */
class BlockSplitTest {
    private static final int MAX = 4096;

    /** A piece as the op saw it. */
    private record Seen(long offset, int length, long pos) {
    }

    private static List<Seen> cut(long offset, long length, int max) {
        List<Seen> seen = new ArrayList<>();
        BlockSplit.forEach(offset, length, max, (at, n, pos) -> seen.add(new Seen(at, n, pos)));
        return seen;
    }

    @Test
    void piecesStayAlignedAndAtLeastOneBlock() {
        assertEquals(126976, BlockSplit.maxPiece(126976, 512));
        assertEquals(128 * 1024, BlockSplit.maxPiece(128 * 1024 + 100, 512), "rounded down to the block");
        assertEquals(4096, BlockSplit.maxPiece(1024, 4096), "never below one block");
        assertThrows(IllegalArgumentException.class, () -> BlockSplit.maxPiece(4096, 0));
    }

    @Test
    void lengthZeroIsNoPiece() {
        assertEquals(0, BlockSplit.pieces(0, MAX));
        assertEquals(List.of(), cut(8192, 0, MAX));
    }

    @Test
    void exactlyTheMaxIsOnePieceAndOneMoreByteIsTwo() {
        assertEquals(1, BlockSplit.pieces(MAX, MAX));
        assertEquals(List.of(new Seen(8192, MAX, 0)), cut(8192, MAX, MAX));
        assertEquals(2, BlockSplit.pieces(MAX + 1, MAX));
        assertEquals(List.of(new Seen(8192, MAX, 0), new Seen(8192 + MAX, 1, MAX)), cut(8192, MAX + 1, MAX));
        assertEquals(1, BlockSplit.pieces(1, MAX));
    }

    @Test
    void piecesComeInOrderAndCoverTheRangeOnce() {
        long offset = (1L << 40) + 512; // past 2^32: offsets are longs all the way
        List<Seen> seen = cut(offset, 3L * MAX + 512, MAX);
        assertEquals(List.of(new Seen(offset, MAX, 0), new Seen(offset + MAX, MAX, MAX),
                new Seen(offset + 2 * MAX, MAX, 2 * MAX), new Seen(offset + 3 * MAX, 512, 3 * MAX)), seen);
        // a trim of 6 GiB in pieces of 2 GiB - 512: lengths beyond an int
        long big = 6L << 30;
        int max = Integer.MAX_VALUE - 511;
        List<Seen> large = cut(0, big, max);
        assertEquals(BlockSplit.pieces(big, max), large.size());
        assertEquals(big, large.stream().mapToLong(Seen::length).sum());
        assertEquals(big - large.get(large.size() - 1).length(), large.get(large.size() - 1).pos());
    }

    @Test
    void badArgumentsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> BlockSplit.pieces(-1, MAX));
        assertThrows(IllegalArgumentException.class, () -> BlockSplit.pieces(MAX, 0));
        assertThrows(IllegalArgumentException.class, () -> cut(0, -512, MAX));
        assertThrows(IllegalArgumentException.class, () -> BlockSplit.run(0, MAX, MAX, 0, (a, n, p) -> null));
        assertThrows(IllegalArgumentException.class, () -> BlockSplit.pieces(Long.MAX_VALUE, 1), "too many pieces");
    }

    @Test
    void aSliceIsCountedFromTheBuffersPositionAndLeavesItAlone() {
        byte[] bytes = new byte[64];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) i;
        }
        ByteBuffer buf = ByteBuffer.wrap(bytes).position(10).limit(50); // 40 bytes from 10
        ByteBuffer piece = BlockSplit.slice(buf, 16, 8);
        assertEquals(0, piece.position());
        assertEquals(8, piece.limit());
        assertEquals(26, piece.get(0), "16 bytes past the position, not past the start of the memory");
        piece.put(7, (byte) 99);
        assertEquals(99, bytes[33], "the same memory: a read into the piece fills the request's buffer");
        piece.position(8); // a device that moved its piece's position
        assertEquals(10, buf.position(), "the request's buffer is untouched");
        assertEquals(50, buf.limit());
        assertEquals(8, BlockSplit.slice(buf, 32, 8).remaining(), "the last bytes");
        assertThrows(IndexOutOfBoundsException.class, () -> BlockSplit.slice(buf, 33, 8), "past the limit");
        assertThrows(IndexOutOfBoundsException.class, () -> BlockSplit.slice(buf, -1, 8));
        assertTrue(BlockSplit.slice(buf.asReadOnlyBuffer(), 0, 8).isReadOnly(), "a write's data stays read-only");
    }

    @Test
    void runOfLengthZeroCallsNothing() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        CompletableFuture<Void> f = BlockSplit.run(0, 0, MAX, 8, (a, n, p) -> {
            calls.incrementAndGet();
            return CompletableFuture.completedFuture(null);
        });
        assertTrue(f.isDone());
        f.get();
        assertEquals(0, calls.get());
    }

    @Test
    void aRangeOfAtMostTheMaxIsTheOpsOwnFuture() {
        CompletableFuture<Void> device = new CompletableFuture<>();
        List<Seen> seen = new ArrayList<>();
        CompletableFuture<Void> f = BlockSplit.run(512, MAX, MAX, 8, (a, n, p) -> {
            seen.add(new Seen(a, n, p));
            return device;
        });
        assertSame(device, f, "no wrapping on the common path");
        assertEquals(List.of(new Seen(512, MAX, 0)), seen);
    }

    @Test
    void theWindowBoundsThePiecesInFlightAndTheyStartInOrder() throws Exception {
        List<Seen> started = new ArrayList<>();
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        CompletableFuture<Void> f = BlockSplit.run(0, 5L * MAX, MAX, 2, (a, n, p) -> {
            started.add(new Seen(a, n, p));
            CompletableFuture<Void> d = new CompletableFuture<>();
            pending.add(d);
            return d;
        });
        assertEquals(2, started.size(), "two in flight, no more");
        pending.get(1).complete(null);
        assertEquals(3, started.size(), "one ended, the next starts");
        pending.get(0).complete(null);
        pending.get(2).complete(null);
        pending.get(3).complete(null);
        assertEquals(5, started.size());
        assertFalse(f.isDone(), "the last piece still runs");
        pending.get(4).complete(null);
        f.get(1, TimeUnit.SECONDS);
        assertEquals(cut(0, 5L * MAX, MAX), started, "each piece once, in order");
    }

    @Test
    void allStartsEveryPieceAtOnce() {
        AtomicInteger started = new AtomicInteger();
        CompletableFuture<Void> f = BlockSplit.run(0, 10L * MAX + 512, MAX, BlockSplit.ALL, (a, n, p) -> {
            started.incrementAndGet();
            return new CompletableFuture<>();
        });
        assertEquals(11, started.get());
        assertFalse(f.isDone());
    }

    @Test
    void aPieceFailingInTheMiddleFailsTheWholeAndNoLaterPieceStarts() {
        BlockIoException eio = new BlockIoException(Errno.EIO, "piece 2");
        List<Long> started = new ArrayList<>();
        CompletableFuture<Void> f = BlockSplit.run(0, 6L * MAX, MAX, 1, (a, n, p) -> {
            started.add(p);
            return p == 2 * MAX ? CompletableFuture.failedFuture(eio) : CompletableFuture.completedFuture(null);
        });
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(1, TimeUnit.SECONDS));
        assertSame(eio, e.getCause(), "the piece's own error");
        assertEquals(Errno.EIO, BlockIoException.errnoOf(e));
        assertEquals(List.of(0L, (long) MAX, 2L * MAX), started);
    }

    @Test
    void anOpThatThrowsIsItsPiecesFailure() {
        List<Long> started = new ArrayList<>();
        CompletableFuture<Void> f = BlockSplit.run(0, 4L * MAX, MAX, 8, (a, n, p) -> {
            started.add(p);
            if (p == MAX) {
                throw new IllegalStateException("device closed");
            }
            return CompletableFuture.completedFuture(null);
        });
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(1, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof IllegalStateException);
        assertEquals(List.of(0L, (long) MAX), started);
        // and one piece alone: a failed future, not a throw at the caller
        CompletableFuture<Void> one = BlockSplit.run(0, MAX, MAX, 8, (a, n, p) -> {
            throw new IllegalStateException("device closed");
        });
        assertTrue(one.isCompletedExceptionally());
    }

    /**
     * The gateway releases a request's buffer when the request completes: a failure must not
     * complete it while another piece still uses the buffer. The error is the first one seen.
     */
    @Test
    void aFailureWaitsForThePiecesStillRunningAndTheFirstErrorWins() throws Exception {
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        CompletableFuture<Void> f = BlockSplit.run(0, 3L * MAX, MAX, BlockSplit.ALL, (a, n, p) -> {
            CompletableFuture<Void> d = new CompletableFuture<>();
            pending.add(d);
            return d;
        });
        assertEquals(3, pending.size());
        BlockIoException first = new BlockIoException(Errno.ENOSPC, "second piece");
        pending.get(1).completeExceptionally(first);
        assertFalse(f.isDone(), "two pieces still hold the buffer");
        pending.get(0).completeExceptionally(new BlockIoException(Errno.EIO, "first piece, later"));
        assertFalse(f.isDone());
        pending.get(2).complete(null);
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(1, TimeUnit.SECONDS));
        assertSame(first, e.getCause());
    }

    @Test
    void piecesThatCompleteInlineAreLoopedOverNotRecursedInto() throws Exception {
        // 200 000 inline completions: a recursion per piece would overflow the stack
        AtomicInteger calls = new AtomicInteger();
        CompletableFuture<Void> f = BlockSplit.run(0, 200_000L * 512, 512, 1, (a, n, p) -> {
            calls.incrementAndGet();
            return CompletableFuture.completedFuture(null);
        });
        f.get(10, TimeUnit.SECONDS);
        assertEquals(200_000, calls.get());
    }

    @Test
    void piecesCompletedOnOtherThreadsRunEachOnceWithinTheWindow() throws Exception {
        ExecutorService device = Executors.newFixedThreadPool(2);
        try {
            int pieces = 2000;
            int window = 8;
            AtomicInteger inFlight = new AtomicInteger();
            AtomicInteger most = new AtomicInteger();
            long[] startedAt = new long[pieces];
            AtomicInteger order = new AtomicInteger();
            CompletableFuture<Void> f = BlockSplit.run(0, (long) pieces * 512, 512, window, (a, n, p) -> {
                int now = inFlight.incrementAndGet();
                most.accumulateAndGet(now, Math::max);
                startedAt[(int) (p / 512)] = order.incrementAndGet();
                return CompletableFuture.runAsync(inFlight::decrementAndGet, device);
            });
            f.get(30, TimeUnit.SECONDS);
            assertTrue(most.get() <= window, "at most " + window + " in flight, saw " + most.get());
            for (int i = 0; i < pieces; i++) {
                assertEquals(i + 1, startedAt[i], "piece " + i + " started once, in order");
            }
        } finally {
            device.shutdownNow();
        }
    }

    /** BlockDevice's default zeroing that keeps the range allocated: zero buffers, one at a time. */
    @Test
    void zeroBuffersGoOneAtATimeAndStopAtAFailure() throws Exception {
        List<String> writes = new ArrayList<>();
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        BlockDevice d = new BlockDevice() {
            @Override
            public long size() {
                return 1 << 20;
            }

            @Override
            public int maxIoSize() {
                return MAX + 100; // not a multiple of the block: pieces stay aligned
            }

            @Override
            public Capabilities capabilities() {
                return new Capabilities(true, true, true, true, false, true);
            }

            @Override
            public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
                throw new AssertionError();
            }

            @Override
            public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
                byte[] b = new byte[src.remaining()];
                src.duplicate().get(b);
                assertArrayEquals(new byte[b.length], b, "zeros");
                writes.add(offset + "+" + b.length + (fua ? " fua" : ""));
                CompletableFuture<Void> f = new CompletableFuture<>();
                pending.add(f);
                return f;
            }

            @Override
            public CompletableFuture<Void> flush() {
                throw new AssertionError();
            }

            @Override
            public CompletableFuture<Void> trim(long offset, long length) {
                throw new AssertionError();
            }

            @Override
            public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
                throw new AssertionError("the unmapping zeroing");
            }

            @Override
            public void close() {
            }
        };
        CompletableFuture<Void> f = d.writeZeroes(8192, 3L * MAX + 512, true, true);
        assertEquals(List.of("8192+4096 fua"), writes, "one zero buffer in flight");
        pending.get(0).complete(null);
        pending.get(1).complete(null);
        assertEquals(List.of("8192+4096 fua", "12288+4096 fua", "16384+4096 fua"), writes);
        pending.get(2).completeExceptionally(new BlockIoException(Errno.ENOSPC, "full"));
        assertEquals(3, writes.size(), "nothing after the failure");
        assertEquals(Errno.ENOSPC, BlockIoException.errnoOf(assertThrows(ExecutionException.class, f::get)));
        assertTrue(d.writeZeroes(0, 0, false, true).isDone(), "nothing to zero");
        assertEquals(3, writes.size(), "a length of 0 writes nothing");
    }
}

package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.testkit.Await;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FailoverTest {
    static final int BLOCKS = 64;
    static final int LEN = 4096;

    static void bothConnected(ClientSession s) throws InterruptedException {
        Await.until("both paths connected",
                () -> s.pathInfo().stream().allMatch(p -> p.state() == PathState.CONNECTED));
    }

    /**
     * Each block is rewritten with rising stamps (the next write only after the previous
     * one is acknowledged, as a block layer does); one path dies mid-stream. Every write
     * completes exactly once and successfully, and per block the stamps land in order.
     */
    @Test
    void pathKilledMidIoLosesDuplicatesAndReordersNothing() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(true))) {
            ClientSession s = f.open(f.config("failover", f.path(f.dev1), f.path(f.dev2)));
            bothConnected(s);
            int rounds = 30;
            AtomicInteger doneCalls = new AtomicInteger();
            List<CompletableFuture<Void>> chains = new ArrayList<>();
            CompletableFuture<Void> halfway = new CompletableFuture<>();
            AtomicInteger acked = new AtomicInteger();
            for (int b = 0; b < BLOCKS; b++) {
                chains.add(chain(s, b, 1, rounds, doneCalls, acked, halfway));
            }
            halfway.get(30, TimeUnit.SECONDS);
            f.server.remove(f.dev2); // the server side of path 2 vanishes mid-IO
            for (CompletableFuture<Void> c : chains) {
                c.get(60, TimeUnit.SECONDS);
            }
            assertEquals(BLOCKS * rounds, doneCalls.get(), "every write completed exactly once");
            Map<Long, Long> last = new HashMap<>();
            synchronized (f.ops) {
                for (long[] l : f.ops.landed) {
                    long prev = last.getOrDefault(l[0], 0L);
                    assertTrue(l[1] >= prev, "block at " + l[0] + ": stamp " + l[1] + " landed after " + prev);
                    last.put(l[0], l[1]);
                }
            }
            for (int b = 0; b < BLOCKS; b++) {
                byte[] got = new byte[LEN];
                System.arraycopy(f.ops.disk, b * LEN, got, 0, LEN);
                assertArrayEquals(Patterns.block(b, rounds, LEN).array(), got, "block " + b);
            }
            RtrsClientPathInfo p2 = s.pathInfo().get(1);
            assertTrue(p2.state() != PathState.CONNECTED);
            assertEquals(SessionState.CONNECTED, s.state());
        }
    }

    private static CompletableFuture<Void> chain(ClientSession s, int block, int stamp, int rounds, AtomicInteger calls,
                                                 AtomicInteger acked, CompletableFuture<Void> halfway) {
        CompletableFuture<Void> out = new CompletableFuture<>();
        s.write(MemoryOps.hdr((long) block * LEN), Patterns.block(block, stamp, LEN), e -> {
            calls.incrementAndGet();
            if (e != 0) {
                out.completeExceptionally(new AssertionError("write " + block + "/" + stamp + " failed: " + e));
                return;
            }
            if (acked.incrementAndGet() == BLOCKS * rounds / 2) {
                halfway.complete(null);
            }
            if (stamp == rounds) {
                out.complete(null);
            } else {
                chain(s, block, stamp + 1, rounds, calls, acked, halfway).whenComplete((v, t) -> {
                    if (t != null) {
                        out.completeExceptionally(t);
                    } else {
                        out.complete(null);
                    }
                });
            }
        });
        return out;
    }

    /**
     * The failed path's write is stuck in the server's upper layer. Its resubmission must
     * wait for the server's fence, so the write is not acknowledged while the stale copy
     * can still land; once it lands, the resubmitted copy follows and a newer write lands last.
     */
    @Test
    void resubmittedWriteWaitsForTheFenceOfTheOldPath() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(false))) {
            ClientSession s = f.open(f.config("fence", f.path(f.dev1), f.path(f.dev2)));
            bothConnected(s);
            long at = 40 * LEN;
            f.ops.hold = r -> r.isWrite() && MemoryOps.offset(r) == at;
            CompletableFuture<Integer> v1 = new CompletableFuture<>();
            s.write(MemoryOps.hdr(at), Patterns.block(40, 1, LEN), v1::complete);
            Await.until("write held in the server", () -> !f.ops.held.isEmpty());
            f.ops.hold = r -> false;
            String victim = s.pathInfo().stream().filter(p -> p.stats().io().inflight() > 0).findFirst()
                    .orElseThrow().name();
            f.server.remove(victim.startsWith("127.0.0.1") ? f.dev1 : f.dev2);
            Await.until("client saw the path fail", () -> s.pathInfo().stream()
                    .anyMatch(p -> p.name().equals(victim) && p.state() != PathState.CONNECTED));
            boolean early;
            try {
                v1.get(500, TimeUnit.MILLISECONDS);
                early = true;
            } catch (TimeoutException expected) {
                early = false;
            }
            CompletableFuture<Integer> v2 = new CompletableFuture<>();
            if (early) {
                s.write(MemoryOps.hdr(at), Patterns.block(40, 2, LEN), v2::complete);
                v2.get(10, TimeUnit.SECONDS);
            }
            f.ops.releaseHeld(); // the stale copy lands now
            assertEquals(0, v1.get(10, TimeUnit.SECONDS));
            if (!early) {
                s.write(MemoryOps.hdr(at), Patterns.block(40, 2, LEN), v2::complete);
                assertEquals(0, v2.get(10, TimeUnit.SECONDS));
            }
            assertFalse(early, "write acknowledged before the old path was fenced");
            List<Long> stamps = new ArrayList<>();
            synchronized (f.ops) {
                for (long[] l : f.ops.landed) {
                    if (l[0] == at) {
                        stamps.add(l[1]);
                    }
                }
            }
            assertEquals(List.of(1L, 1L, 2L), stamps, "stale copy, resubmitted copy, then the newer write");
            byte[] got = new byte[LEN];
            System.arraycopy(f.ops.disk, (int) at, got, 0, LEN);
            assertArrayEquals(Patterns.block(40, 2, LEN).array(), got);
        }
    }

    /**
     * A full outage: both paths go while a write is stuck in the server's upper layer, so
     * the write fails to the caller with EIO (io.timeout.ms 0). The caller rewrites the block
     * once a path is back. That rewrite must not reach the server before the stale copy has
     * landed or been dropped, so it waits for the fence of the old path instance, which the
     * server answers only once the stale copy is done: the newer write lands last.
     */
    @Test
    void aRewriteAfterAFullOutageWaitsForTheFenceOfTheStaleCopy() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(false))) {
            ClientSession s = f.open(f.config("outage", f.path(f.dev1), f.path(f.dev2)));
            bothConnected(s);
            long at = 7 * LEN;
            f.ops.hold = r -> r.isWrite() && MemoryOps.offset(r) == at;
            CompletableFuture<Integer> v1 = new CompletableFuture<>();
            s.write(MemoryOps.hdr(at), Patterns.block(7, 1, LEN), v1::complete);
            Await.until("write held in the server", () -> !f.ops.held.isEmpty());
            f.ops.hold = r -> false;
            for (RtrsClientPathInfo p : s.pathInfo()) {
                s.disconnectPath(p.name());
            }
            assertEquals(Errno.EIO, v1.get(10, TimeUnit.SECONDS), "failed to the caller in the outage");
            for (RtrsClientPathInfo p : s.pathInfo()) {
                s.reconnectPath(p.name());
            }
            Await.until("a path is back", () -> s.pathInfo().stream().anyMatch(p -> p.state() == PathState.CONNECTED));
            CompletableFuture<Integer> v2 = new CompletableFuture<>();
            s.write(MemoryOps.hdr(at), Patterns.block(7, 2, LEN), v2::complete);
            assertThrows(TimeoutException.class, () -> v2.get(300, TimeUnit.MILLISECONDS),
                    "the rewrite went out while the stale copy could still land");
            f.ops.releaseHeld(); // the stale copy lands; the fence is answered; the rewrite follows
            assertEquals(0, v2.get(10, TimeUnit.SECONDS));
            List<Long> stamps = new ArrayList<>();
            synchronized (f.ops) {
                for (long[] l : f.ops.landed) {
                    if (l[0] == at) {
                        stamps.add(l[1]);
                    }
                }
            }
            assertEquals(List.of(1L, 2L), stamps, "the stale copy, then the rewrite");
            byte[] got = new byte[LEN];
            System.arraycopy(f.ops.disk, (int) at, got, 0, LEN);
            assertArrayEquals(Patterns.block(7, 2, LEN).array(), got);
        }
    }

    /**
     * The server closes the whole session while requests are held on both paths: the paths
     * fail one after the other, and the first to fail sends its FENCE on the other, whose
     * connection is already gone although its own failure has not been handled yet; posting
     * the FENCE fails that path too, inside the first one's failover. Every path must come
     * back and every request complete. (The nested failover used to throw
     * ConcurrentModificationException out of the first path's callback: that path then stayed
     * "reconnecting" forever and its requests never completed; SoakIT found it, this repeats
     * the race until it is hit.)
     */
    @Test
    void serverClosingTheSessionUnderHeldIoBringsEveryPathAndRequestBack() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(false))) {
            ClientSession s = f.open(ClientConfig.of("closed", List.of(f.path(f.dev1), f.path(f.dev2)))
                    .withTimings(50, 0, 30_000, 5000, 5).withCons(2));
            bothConnected(s);
            for (int round = 0; round < 20; round++) {
                f.ops.hold = r -> r.isWrite();
                List<CompletableFuture<Integer>> writes = new ArrayList<>();
                for (int b = 0; b < 8; b++) {
                    CompletableFuture<Integer> w = new CompletableFuture<>();
                    s.write(MemoryOps.hdr((long) b * LEN), Patterns.block(b, round + 1, LEN), w::complete);
                    writes.add(w);
                }
                Await.until("8 writes held in the server", () -> f.ops.held.size() == 8);
                f.ops.hold = r -> false;
                assertTrue(f.server.closeSession("closed"), "round " + round + ": no server session to close");
                int r = round;
                Await.until("round " + r + ": both paths failed", () -> s.pathInfo().stream()
                        .allMatch(p -> p.stats().failovers() > 0 || p.state() != PathState.CONNECTED));
                f.ops.releaseHeld(); // the closed session's requests finish (the server fences on them)
                Await.until("round " + r + ": both paths back after the server closed the session",
                        () -> s.pathInfo().stream().allMatch(p -> p.state() == PathState.CONNECTED));
                for (CompletableFuture<Integer> w : writes) {
                    assertEquals(0, w.get(10, TimeUnit.SECONDS), "round " + round + ": a write failed");
                }
            }
        }
    }
}

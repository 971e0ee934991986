package io.rnbd.rtrs.client.internal;

import io.rnbd.rtrs.api.RtrsPlug;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.testkit.Await;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The submission plug: what a thread submits while it holds one goes out when it closes, all of it. */
class PlugTest {
    private static final int LEN = 4096;

    private static List<CompletableFuture<Integer>> writes(ClientSession s, int n, byte stamp) {
        List<CompletableFuture<Integer>> done = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] data = new byte[LEN];
            Arrays.fill(data, (byte) (stamp + i));
            CompletableFuture<Integer> w = new CompletableFuture<>();
            s.write(MemoryOps.hdr((long) i * LEN), ByteBuffer.wrap(data), w::complete);
            done.add(w);
        }
        return done;
    }

    /**
     * A write from another thread, on the session's only IO connection, answered: had the
     * plugged writes been posted, they would have been ahead of it on that connection, and
     * the server serves a connection in order. So after this, the server has seen exactly
     * what was posted, without waiting for a time.
     */
    private static void barrier(ClientSession s) throws Exception {
        CompletableFuture<Integer> w = new CompletableFuture<>();
        Thread t = new Thread(() -> s.write(MemoryOps.hdr(60L * LEN), ByteBuffer.wrap(new byte[LEN]), w::complete));
        t.start();
        assertEquals(0, w.get(10, TimeUnit.SECONDS));
    }

    private static void assertAllLanded(SoftFixture f, List<CompletableFuture<Integer>> done, byte stamp)
            throws Exception {
        for (CompletableFuture<Integer> w : done) {
            assertEquals(0, w.get(10, TimeUnit.SECONDS));
        }
        for (int i = 0; i < done.size(); i++) {
            byte[] expected = new byte[LEN];
            Arrays.fill(expected, (byte) (stamp + i));
            assertArrayEquals(expected, Arrays.copyOfRange(f.ops.disk, i * LEN, (i + 1) * LEN), "block " + i);
        }
    }

    @Test
    void writesUnderAPlugLeaveOnlyWhenItCloses() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(true))) {
            ClientSession s = f.open(f.config("plug", f.path(f.dev1)).withCons(1));
            Await.until("connected", () -> s.state() == SessionState.CONNECTED);
            List<CompletableFuture<Integer>> done;
            try (RtrsPlug plug = s.plug()) {
                done = writes(s, 9, (byte) 10);
                barrier(s);
                assertTrue(done.stream().noneMatch(CompletableFuture::isDone), "nothing left while plugged");
                synchronized (f.ops) {
                    assertEquals(1, f.ops.landed.size(), "the server saw only the other thread's write");
                }
            }
            assertAllLanded(f, done, (byte) 10);
            assertEquals(10, s.pathInfo().get(0).stats().io().writes(), "each post counted once it was made");
        }
    }

    @Test
    void aNestedPlugIsNoneAndTheOuterOneSendsEverything() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(false))) {
            ClientSession s = f.open(f.config("nested", f.path(f.dev1)).withCons(1));
            Await.until("connected", () -> s.state() == SessionState.CONNECTED);
            RtrsPlug outer = s.plug();
            RtrsPlug inner = s.plug();
            assertSame(RtrsPlug.NONE, inner);
            List<CompletableFuture<Integer>> done = writes(s, 3, (byte) 40);
            inner.close();
            barrier(s);
            assertTrue(done.stream().noneMatch(CompletableFuture::isDone), "the inner plug's close sent nothing");
            outer.close();
            outer.close(); // idempotent
            assertAllLanded(f, done, (byte) 40);
            // the thread holds no plug any more: the next write leaves at once
            CompletableFuture<Integer> w = new CompletableFuture<>();
            s.write(MemoryOps.hdr(0), ByteBuffer.wrap(new byte[LEN]), w::complete);
            assertEquals(0, w.get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void onlyTheThreadThatTookAPlugClosesIt() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(false))) {
            ClientSession s = f.open(f.config("owner", f.path(f.dev1)).withCons(1));
            Await.until("connected", () -> s.state() == SessionState.CONNECTED);
            RtrsPlug plug = s.plug();
            List<CompletableFuture<Integer>> done = writes(s, 2, (byte) 70);
            CompletableFuture<Throwable> other = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    plug.close();
                    other.complete(null);
                } catch (Throwable e) {
                    other.complete(e);
                }
            });
            t.start();
            assertTrue(other.get(10, TimeUnit.SECONDS) instanceof IllegalStateException);
            barrier(s); // another thread's submissions are not plugged by this one
            assertTrue(done.stream().noneMatch(CompletableFuture::isDone));
            plug.close();
            assertAllLanded(f, done, (byte) 70);
        }
    }

    /**
     * Four threads write their own blocks in plugged bursts of 1-6 requests, more than the
     * queue depth at once (so some wait for permits and are posted by completing threads),
     * while a path dies halfway; every write completes once and successfully, and every
     * block reads back as last written.
     */
    @Test
    void concurrentPluggedBurstsSurviveAPathFailure() throws Exception {
        int threads = 4;
        int blocks = 64; // per thread
        int slot = 8192;
        int rounds = 6;
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(true))) {
            ClientSession s = f.open(f.config("plugstress", f.path(f.dev1), f.path(f.dev2)));
            FailoverTest.bothConnected(s);
            java.util.concurrent.CyclicBarrier halfway = new java.util.concurrent.CyclicBarrier(threads + 1);
            List<CompletableFuture<Void>> workers = new ArrayList<>();
            java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
            for (int t = 0; t < threads; t++) {
                int first = t * blocks;
                workers.add(CompletableFuture.runAsync(() -> {
                    java.util.Random rnd = new java.util.Random(first);
                    try {
                        for (int round = 1; round <= rounds; round++) {
                            if (round == rounds / 2 + 1) {
                                halfway.await(30, TimeUnit.SECONDS);
                            }
                            List<CompletableFuture<Integer>> done = new ArrayList<>();
                            int b = first;
                            while (b < first + blocks) {
                                int burst = Math.min(1 + rnd.nextInt(6), first + blocks - b);
                                try (RtrsPlug plug = s.plug()) {
                                    for (int i = 0; i < burst; i++, b++) {
                                        CompletableFuture<Integer> w = new CompletableFuture<>();
                                        s.write(MemoryOps.hdr((long) b * slot), Patterns.block(b, round,
                                                ConcurrentIoTest.len(b, round)), e -> {
                                                    calls.incrementAndGet();
                                                    w.complete(e);
                                                });
                                        done.add(w);
                                    }
                                }
                            }
                            for (CompletableFuture<Integer> w : done) {
                                assertEquals(0, w.get(60, TimeUnit.SECONDS));
                            }
                        }
                    } catch (Exception e) {
                        throw new java.util.concurrent.CompletionException(e);
                    }
                }));
            }
            halfway.await(60, TimeUnit.SECONDS);
            f.server.remove(f.dev2); // the server side of path 2 vanishes under the plugged bursts
            for (CompletableFuture<Void> w : workers) {
                w.get(120, TimeUnit.SECONDS);
            }
            assertEquals(threads * blocks * rounds, calls.get(), "every write completed exactly once");
            for (int b = 0; b < threads * blocks; b++) {
                int len = ConcurrentIoTest.len(b, rounds);
                ByteBuffer dst = ByteBuffer.allocate(len);
                CompletableFuture<Integer> r = new CompletableFuture<>();
                s.read(MemoryOps.hdr((long) b * slot), dst, r::complete);
                assertEquals(0, r.get(30, TimeUnit.SECONDS));
                assertEquals(Patterns.crc(Patterns.block(b, rounds, len)), Patterns.crc(dst), "block " + b);
            }
        }
    }

    @Test
    void postsHeldWhileTheirPathDiesFailOverWhenThePlugCloses() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(true))) {
            ClientSession s = f.open(f.config("plugfail", f.path(f.dev1), f.path(f.dev2)));
            FailoverTest.bothConnected(s);
            List<CompletableFuture<Integer>> done;
            try (RtrsPlug plug = s.plug()) {
                done = writes(s, 16, (byte) 100); // round robin: half of them on each path
                f.server.remove(f.dev2);
                Await.until("path 2 seen failed", () -> s.pathInfo().stream()
                        .anyMatch(p -> p.state() != io.rnbd.rtrs.api.PathState.CONNECTED));
            }
            assertAllLanded(f, done, (byte) 100);
        }
    }

    /**
     * The IO connection is the submitting thread's, as it is the submitting CPU's in the
     * kernel: a thread's burst leaves in one post on one connection, and the next thread to
     * submit gets the other connection of two. Picked by permit, as before, a burst of eight
     * spread over both and went out as two socket writes.
     */
    @Test
    void aThreadsBurstGoesToOneConnectionAndTheNextThreadsToTheOther() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(true))) {
            ClientSession s = f.open(f.config("plug", f.path(f.dev1)).withCons(2));
            Await.until("connected", () -> s.state() == SessionState.CONNECTED);
            List<CompletableFuture<Integer>> done = new ArrayList<>();
            // fresh threads, one after the other: each is numbered at its first submission
            Set<Integer> first = onNewThread(() -> heldCids(s, done, 8, (byte) 1));
            Set<Integer> second = onNewThread(() -> heldCids(s, done, 8, (byte) 9));
            assertEquals(1, first.size(), "one thread's burst on one connection: " + first);
            assertEquals(1, second.size(), "one thread's burst on one connection: " + second);
            assertNotEquals(first, second, "two submitting threads on two connections");
            for (CompletableFuture<Integer> w : done) {
                assertEquals(0, w.get(10, TimeUnit.SECONDS));
            }
        }
    }

    private static <T> T onNewThread(Supplier<T> work) throws Exception {
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread t = new Thread(() -> result.complete(work.get()));
        t.start();
        return result.get(10, TimeUnit.SECONDS);
    }

    /** Plugged writes of {@code n} blocks from this thread; the connections their held posts are for. */
    private static Set<Integer> heldCids(ClientSession s, List<CompletableFuture<Integer>> done, int n, byte stamp) {
        try (RtrsPlug plug = s.plug()) {
            List<CompletableFuture<Integer>> w = writes(s, n, stamp);
            synchronized (done) {
                done.addAll(w);
            }
            Set<Integer> cids = new HashSet<>();
            for (PathIo.Post p : ((Doorbells.SessionPlug) plug).held) {
                cids.add(p.con.cid);
            }
            return cids;
        }
    }
}

package io.rnbd.rtrs.client.internal;

import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
import io.rnbd.testkit.Await;
import io.rnbd.testkit.FakeScheduler;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A request stuck on a healthy path (its server's upper layer never answers) is timed out
 * after request.timeout.ms (fake time): the path fails, the request goes to the other path
 * once the stuck one is fenced, and it completes there; the count is in the path's stats.
 */
class RequestTimeoutTest {
    private static final int LEN = 4096;

    @Test
    void aStuckRequestFailsItsPathAndCompletesElsewhere() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(false))) {
            FakeScheduler fake = new FakeScheduler();
            // heartbeats an hour apart: fake time jumps, the peer's answers come in real time
            ClientConfig cfg = f.config("stuck", f.path(f.dev1), f.path(f.dev2)).withTimings(50, 0, 0, 3_600_000, 5)
                    .withRequestTimeout(2000);
            ClientSession s = f.open(cfg, fake, fake.nanoSource());
            Await.until("both connected", () -> s.pathInfo().stream().allMatch(p -> p.state() == PathState.CONNECTED));
            f.ops.hold = r -> r.isWrite() && MemoryOps.offset(r) == 0;
            CompletableFuture<Integer> w = new CompletableFuture<>();
            s.write(MemoryOps.hdr(0), Patterns.block(0, 1, LEN), w::complete);
            Await.until("held by the server", () -> f.ops.held.size() == 1);
            String stuckOn = s.pathInfo().stream().filter(p -> p.stats().io().inflight() > 0).findFirst()
                    .orElseThrow().name();
            f.ops.hold = r -> false;

            fake.advance(Duration.ofMillis(1500));
            assertFalse(w.isDone(), "not before request.timeout.ms");
            assertEquals(PathState.CONNECTED, path(s, stuckOn).state());

            fake.advance(Duration.ofMillis(1000));
            Await.until("the stuck path failed", () -> path(s, stuckOn).state() != PathState.CONNECTED);
            assertEquals(1, path(s, stuckOn).stats().requestTimeouts());
            // the other path fences the stuck one: the server answers once the stuck request is done
            assertFalse(w.isDone(), "not resubmitted while the stale copy may still land");
            f.ops.releaseHeld();
            assertEquals(0, w.get(10, TimeUnit.SECONDS));
            byte[] got = new byte[LEN];
            System.arraycopy(f.ops.disk, 0, got, 0, LEN);
            assertArrayEquals(Patterns.block(0, 1, LEN).array(), got);
            assertTrue(f.ops.landed.size() >= 1);
        }
    }

    @Test
    void zeroNeverTimesOut() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(false))) {
            FakeScheduler fake = new FakeScheduler();
            ClientSession s = f.open(f.config("never", f.path(f.dev1)).withTimings(50, 0, 0, 3_600_000, 5)
                    .withRequestTimeout(0), fake, fake.nanoSource());
            Await.until("connected", () -> s.pathInfo().get(0).state() == PathState.CONNECTED);
            f.ops.hold = r -> true;
            CompletableFuture<Integer> w = new CompletableFuture<>();
            s.write(MemoryOps.hdr(0), Patterns.block(0, 1, LEN), w::complete);
            Await.until("held", () -> f.ops.held.size() == 1);
            fake.advance(Duration.ofMinutes(10).minusMillis(1));
            assertEquals(PathState.CONNECTED, s.pathInfo().get(0).state());
            assertFalse(w.isDone());
            f.ops.hold = r -> false;
            f.ops.releaseHeld();
            assertEquals(0, w.get(10, TimeUnit.SECONDS));
        }
    }

    private static RtrsClientPathInfo path(ClientSession s, String name) {
        List<RtrsClientPathInfo> ps = s.pathInfo();
        return ps.stream().filter(p -> p.name().equals(name)).findFirst().orElseThrow();
    }
}

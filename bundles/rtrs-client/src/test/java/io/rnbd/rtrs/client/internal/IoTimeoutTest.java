package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.testkit.Await;
import io.rnbd.testkit.FakeScheduler;
import io.rnbd.testkit.LogCapture;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** All paths down: IO waits up to io.timeout.ms (fake time), or fails at once with 0. */
class IoTimeoutTest {
    @Test
    void zeroTimeoutFailsAtOnceWithEio() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(false))) {
            FakeScheduler fake = new FakeScheduler();
            ClientSession s = f.open(f.config("t0", f.path(f.dev1)), fake, fake.nanoSource());
            Await.until("connected", () -> s.state() == SessionState.CONNECTED);
            f.server.remove(f.dev1);
            Await.until("disconnected", () -> s.state() == SessionState.DISCONNECTED);
            CompletableFuture<Integer> w = new CompletableFuture<>();
            s.write(MemoryOps.hdr(0), ByteBuffer.allocate(512), w::complete);
            assertEquals(Errno.EIO, w.get(5, TimeUnit.SECONDS));
        }
    }

    @Test
    void ioWaitsForAPathUntilTheTimeout() throws Exception {
        int port = SoftFixture.freePort();
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(false, port))) {
            FakeScheduler fake = new FakeScheduler();
            ClientConfig cfg = f.config("t1", f.path(f.dev1)).withTimings(1000, 0, 3000, 5000, 5);
            ClientSession s = f.open(cfg, fake, fake.nanoSource());
            Await.until("connected", () -> s.state() == SessionState.CONNECTED);
            f.server.remove(f.dev1);
            Await.until("disconnected", () -> s.state() == SessionState.DISCONNECTED);
            List<CompletableFuture<Integer>> ws = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                CompletableFuture<Integer> w = new CompletableFuture<>();
                s.write(MemoryOps.hdr(i * 512L), ByteBuffer.allocate(512), w::complete);
                ws.add(w);
            }
            fake.advance(Duration.ofMillis(2900));
            assertFalse(ws.get(0).isDone(), "still queued before io.timeout.ms");
            try (LogCapture log = LogCapture.start()) {
                fake.advance(Duration.ofMillis(200));
                for (CompletableFuture<Integer> w : ws) {
                    assertEquals(Errno.EIO, w.get(5, TimeUnit.SECONDS));
                }
                // failing clearly: one line for the outage, not one per request
                assertEquals(1, log.lines().stream().filter(l -> l.contains("session t1: IO waited io.timeout.ms "
                        + "(3000 ms) for a connected path; failing it with EIO")).count(), log.text());
            }
            // a path coming back within the timeout serves the queued IO
            CompletableFuture<Integer> late = new CompletableFuture<>();
            s.write(MemoryOps.hdr(0), ByteBuffer.allocate(512), late::complete);
            f.server.add(f.dev1);
            for (int i = 0; i < 10 && s.pathInfo().get(0).state() != PathState.CONNECTED; i++) {
                fake.advance(Duration.ofMillis(500)); // reconnect timers fire on fake time
                Await.until("attempt settled", () -> s.pathInfo().get(0).state() != PathState.CONNECTING);
            }
            assertEquals(0, late.get(10, TimeUnit.SECONDS));
            assertTrue(s.pathInfo().get(0).stats().reconnectsOk() >= 1);
        }
    }

    /**
     * rnbd-client's devices over several servers send a lost server's requests to another:
     * failOutstanding hands back at once what io.timeout.ms would fail later, and leaves the
     * session to reconnect.
     */
    @Test
    void failOutstandingFailsWhatWaitsForAPathNowAndTheSessionLivesOn() throws Exception {
        int port = SoftFixture.freePort();
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(false, port))) {
            FakeScheduler fake = new FakeScheduler();
            ClientConfig cfg = f.config("t2", f.path(f.dev1)).withTimings(1000, 0, 60_000, 5000, 5);
            ClientSession s = f.open(cfg, fake, fake.nanoSource());
            Await.until("connected", () -> s.state() == SessionState.CONNECTED);
            f.server.remove(f.dev1);
            Await.until("disconnected", () -> s.state() == SessionState.DISCONNECTED);
            List<CompletableFuture<Integer>> ws = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                CompletableFuture<Integer> w = new CompletableFuture<>();
                s.write(MemoryOps.hdr(i * 512L), ByteBuffer.allocate(512), w::complete);
                ws.add(w);
            }
            assertFalse(ws.get(0).isDone(), "waiting for a path (io.timeout.ms 60 s)");
            s.failOutstanding(Errno.ENOTCONN);
            for (CompletableFuture<Integer> w : ws) {
                assertEquals(Errno.ENOTCONN, w.get(5, TimeUnit.SECONDS));
            }
            CompletableFuture<Integer> next = new CompletableFuture<>();
            s.write(MemoryOps.hdr(0), ByteBuffer.allocate(512), next::complete);
            f.server.add(f.dev1);
            for (int i = 0; i < 10 && s.pathInfo().get(0).state() != PathState.CONNECTED; i++) {
                fake.advance(Duration.ofMillis(500));
                Await.until("attempt settled", () -> s.pathInfo().get(0).state() != PathState.CONNECTING);
            }
            assertEquals(0, next.get(10, TimeUnit.SECONDS), "the session carries IO again");
        }
    }
}

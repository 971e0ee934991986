package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.testkit.Await;
import io.rnbd.testkit.FakeScheduler;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Failure detection by heartbeat, on fake time (the IO itself is real, over rdma-soft). */
class HeartbeatTest {
    @Test
    void silentPeerFailsThePathAfterTheConfiguredMisses() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(false));
             SilentServer silent = new SilentServer(f.dev1)) {
            FakeScheduler fake = new FakeScheduler();
            InetSocketAddress a = silent.address();
            ClientConfig cfg = ClientConfig.of("hb", List.of(new PathAddress(a.getAddress(), a.getAddress(), a.getPort())))
                    .withTimings(10_000, 1000, 0, 2000, 3).withCons(1);
            ClientSession s = f.open(cfg, fake, fake.nanoSource());
            Await.until("connected", () -> s.state() == SessionState.CONNECTED);
            for (int i = 0; i < 3; i++) {
                fake.advance(Duration.ofMillis(2000)); // heartbeat i+1 goes out, no answer
                assertEquals(PathState.CONNECTED, s.pathInfo().get(0).state(), "after " + (i + 1) + " misses");
            }
            fake.advance(Duration.ofMillis(2000));
            assertEquals(PathState.RECONNECTING, s.pathInfo().get(0).state());
            assertEquals(Errno.ETIMEDOUT, s.pathInfo().get(0).lastError());
            assertEquals(SessionState.DISCONNECTED, s.state());
        }
    }

    @Test
    void answeredHeartbeatsKeepThePathAndMeasureRtt() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(false))) {
            FakeScheduler fake = new FakeScheduler();
            ClientConfig cfg = ClientConfig.of("hb-ok", List.of(f.path(f.dev1))).withTimings(10_000, 1000, 0, 2000, 3)
                    .withCons(1);
            ClientSession s = f.open(cfg, fake, System::nanoTime);
            Await.until("connected", () -> s.state() == SessionState.CONNECTED);
            long rtt = 0;
            for (int i = 0; i < 10; i++) {
                fake.advance(Duration.ofMillis(2000));
                long before = rtt;
                // each ack stores a fresh (real-clock) round-trip time
                Await.until("ack " + i, () -> s.pathInfo().get(0).stats().heartbeatRttNanos() != before);
                rtt = s.pathInfo().get(0).stats().heartbeatRttNanos();
            }
            assertEquals(PathState.CONNECTED, s.pathInfo().get(0).state());
            assertTrue(s.pathInfo().get(0).stats().heartbeatRttNanos() > 0);
        }
    }
}

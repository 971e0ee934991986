package io.rnbd.nbd.gateway.internal;

import static io.rnbd.nbd.proto.NbdConstants.*;
import static org.junit.jupiter.api.Assertions.*;

import io.rnbd.nbd.client.NbdClient;
import io.rnbd.nbd.gateway.testing.MapExports;
import io.rnbd.nbd.gateway.testing.RawNbd;
import io.rnbd.testkit.Await;
import io.rnbd.testkit.FakeScheduler;
import io.rnbd.testkit.block.FakeBlockDevice;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Handshake deadline (on fake time), connection limit and stats. */
@Timeout(30)
class NbdServerLimitsTest {
    private final MapExports exports = new MapExports()
            .with("d", new FakeBlockDevice(1 << 20).limitingEveryRequest());

    @Test
    void clientsThatNeverFinishTheHandshakeAreDropped() throws Exception {
        FakeScheduler time = new FakeScheduler();
        // Idle timeout off: only the handshake deadlines are on the fake timer.
        NbdServerConfig cfg = NbdServerConfig.of(new InetSocketAddress("127.0.0.1", 0), null)
                .withTimeouts(Duration.ofSeconds(30), Duration.ZERO);
        try (NbdServer server = new NbdServer(cfg, exports, time);
             RawNbd idle = new RawNbd(server.tcpAddress());
             RawNbd halfway = new RawNbd(server.tcpAddress())) {
            // A greeting received means its deadline is scheduled (the server sets it first).
            idle.greeting();
            halfway.greet(FLAG_C_FIXED_NEWSTYLE);
            try (NbdClient done = NbdClient.connect(server.tcpAddress(), "d")) {
                // Two, not three: the negotiated client's deadline is cancelled.
                awaitPending(time, Duration.ofSeconds(30), Duration.ofSeconds(30));
                time.advance(Duration.ofSeconds(29));
                assertEquals(0, server.stats().snapshot().handshakeTimeouts());
                time.advance(Duration.ofSeconds(2));
                assertTrue(idle.closedByServer());
                assertTrue(halfway.closedByServer());
                assertEquals(2, server.stats().snapshot().handshakeTimeouts());
                // The client that negotiated in time is not affected.
                done.write(0, ByteBuffer.allocate(4096), false).get();
                done.read(0, ByteBuffer.allocate(4096)).get();
            }
            NbdServerStats.Snapshot s = server.stats().snapshot();
            assertEquals(3, s.connections());
            assertEquals(3, s.requests(), "write, read and the disconnect");
            assertEquals(4096, s.bytesRead());
            assertEquals(4096, s.bytesWritten());
            assertEquals(0, s.errors());
        }
    }

    /**
     * Reader threads schedule a handshake deadline as their connection starts, cancel it a
     * moment after the client has its answer and then schedule the idle check. Waits for
     * exactly these delays: a count alone passes while a deadline about to be cancelled still
     * stands in for an idle check not yet scheduled (CI, 2026-12-01).
     */
    private static void awaitPending(FakeScheduler time, Duration... delays) {
        List<Duration> want = List.of(delays);
        Await.until(() -> "timers due in " + time.pendingDelays() + ", waiting for " + want,
                () -> time.pendingDelays().equals(want), Duration.ofSeconds(5));
    }

    @Test
    void idleClientsAfterTheHandshakeAreClosedAndFreeTheirSlot() throws Exception {
        FakeScheduler time = new FakeScheduler();
        NbdServerConfig cfg = NbdServerConfig.of(new InetSocketAddress("127.0.0.1", 0), null)
                .withMaxConnections(2).withTimeouts(Duration.ofSeconds(30), Duration.ofSeconds(60));
        try (NbdServer server = new NbdServer(cfg, exports, time, time.nanoSource());
             RawNbd idle = new RawNbd(server.tcpAddress()).go("d", false);
             NbdClient busy = NbdClient.connect(server.tcpAddress(), "d")) {
            awaitPending(time, Duration.ofSeconds(60), Duration.ofSeconds(60)); // one idle check per connection
            // The hostile case: two idle clients hold the whole cap and the next one is turned away.
            try (RawNbd third = new RawNbd(server.tcpAddress())) {
                assertTrue(third.closedByServer());
            }
            time.advance(Duration.ofSeconds(40));
            busy.read(0, ByteBuffer.allocate(4096)).get();
            time.advance(Duration.ofSeconds(19)); // t = 59 s
            assertEquals(0, server.stats().snapshot().idleTimeouts());
            time.advance(Duration.ofSeconds(2)); // t = 61 s: idle since 0, busy since 40
            assertTrue(idle.closedByServer());
            assertEquals(1, server.stats().snapshot().idleTimeouts());
            awaitConnections(server, 1);
            try (NbdClient late = NbdClient.connect(server.tcpAddress(), "d")) {
                late.read(0, ByteBuffer.allocate(512)).get();
            }
            busy.read(0, ByteBuffer.allocate(512)).get(); // t = 61 s
            time.advance(Duration.ofSeconds(59)); // t = 120 s: quiet for 59 s only
            busy.read(0, ByteBuffer.allocate(512)).get();
            time.advance(Duration.ofSeconds(61));
            assertThrows(Exception.class, () -> busy.read(0, ByteBuffer.allocate(512)).get(5, TimeUnit.SECONDS));
            assertEquals(2, server.stats().snapshot().idleTimeouts(), "idle, then busy (late disconnected by itself)");
        }
    }

    @Test
    void aRequestStuckInTheDeviceIsNotIdleness() throws Exception {
        FakeScheduler time = new FakeScheduler();
        List<Runnable> held = Collections.synchronizedList(new ArrayList<>());
        MapExports slow = new MapExports().with("slow",
                new FakeBlockDevice(1 << 20).limitingEveryRequest().completingOn(held::add));
        NbdServerConfig cfg = NbdServerConfig.of(new InetSocketAddress("127.0.0.1", 0), null)
                .withTimeouts(Duration.ofSeconds(30), Duration.ofSeconds(60));
        try (NbdServer server = new NbdServer(cfg, slow, time, time.nanoSource());
             NbdClient c = NbdClient.connect(server.tcpAddress(), "slow")) {
            awaitPending(time, Duration.ofSeconds(60));
            CompletableFuture<?> f = c.read(0, ByteBuffer.allocate(4096));
            Await.until("the read reached the device", () -> !held.isEmpty(), Duration.ofSeconds(5));
            assertEquals(1, held.size(), "the read reached the device");
            time.advance(Duration.ofSeconds(150));
            assertEquals(0, server.stats().snapshot().idleTimeouts());
            held.remove(0).run(); // the device answers at t = 150 s
            f.get(5, TimeUnit.SECONDS);
            time.advance(Duration.ofSeconds(59));
            assertEquals(0, server.stats().snapshot().idleTimeouts());
            time.advance(Duration.ofSeconds(62)); // checks run every 60 s while busy: at 180, then 240
            assertEquals(1, server.stats().snapshot().idleTimeouts());
        }
    }

    private static void awaitConnections(NbdServer server, int n) {
        Await.until(() -> server.connectionCount() + " connections, waiting for " + n,
                () -> server.connectionCount() == n, Duration.ofSeconds(5));
    }

    @Test
    void connectionsBeyondTheLimitAreClosed() throws Exception {
        NbdServerConfig cfg = NbdServerConfig.of(new InetSocketAddress("127.0.0.1", 0), null).withMaxConnections(2);
        try (NbdServer server = new NbdServer(cfg, exports);
             NbdClient a = NbdClient.connect(server.tcpAddress(), "d");
             NbdClient b = NbdClient.connect(server.tcpAddress(), "d")) {
            try (RawNbd third = new RawNbd(server.tcpAddress())) {
                assertTrue(third.closedByServer());
            }
            assertEquals(1, server.stats().snapshot().refused());
            a.read(0, ByteBuffer.allocate(512)).get();
            b.read(0, ByteBuffer.allocate(512)).get();
        }
    }
}

package io.rnbd.nbd.gateway.internal;

import static io.rnbd.nbd.gateway.proto.NbdConstants.*;
import static org.junit.jupiter.api.Assertions.*;

import io.rnbd.nbd.gateway.client.NbdClient;
import io.rnbd.nbd.gateway.testing.MapExports;
import io.rnbd.nbd.gateway.testing.MemoryBlockDevice;
import io.rnbd.nbd.gateway.testing.RawNbd;
import io.rnbd.testkit.FakeScheduler;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Handshake deadline (on fake time), connection limit and stats. */
@Timeout(30)
class NbdServerLimitsTest {
    private final MapExports exports = new MapExports()
            .with("d", new MemoryBlockDevice(1 << 20, MemoryBlockDevice.allCaps(), null));

    @Test
    void clientsThatNeverFinishTheHandshakeAreDropped() throws Exception {
        FakeScheduler time = new FakeScheduler();
        try (NbdServer server = new NbdServer(NbdServerConfig.of(new InetSocketAddress("127.0.0.1", 0), null),
                exports, time);
             RawNbd idle = new RawNbd(server.tcpAddress());
             RawNbd halfway = new RawNbd(server.tcpAddress())) {
            halfway.greet(FLAG_C_FIXED_NEWSTYLE);
            try (NbdClient done = NbdClient.connect(server.tcpAddress(), "d")) {
                awaitPending(time, 2);
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
     * Reader threads schedule a deadline as their connection starts and cancel it once the
     * handshake is done, a moment after the client has its answer: wait for exactly {@code n}.
     */
    private static void awaitPending(FakeScheduler time, int n) throws InterruptedException {
        long end = System.nanoTime() + 5_000_000_000L;
        while (time.pending() != n && System.nanoTime() < end) {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
        assertEquals(n, time.pending(), "handshake deadlines scheduled");
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

package io.rnbd.rtrs.client.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.core.internal.DeviceRegistry;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.rtrs.server.internal.RtrsServer;
import io.rnbd.testkit.Await;
import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 20, item 4: at boot the appliance's client often starts before its server listens.
 * The attempts a path makes before it first connects are its first connect, not reconnects:
 * they count in {@code reconnectAttempts} (and against max.reconnect.attempts) but not as failed
 * or successful reconnects in the statistics; only after a connection was lost do they.
 */
class FirstConnectTest {
    @Test
    void attemptsBeforeTheServerListensAreNotCountedAsReconnects() throws Exception {
        ScheduledExecutorService timer = Executors.newScheduledThreadPool(2);
        SoftDevice dev = new SoftDevice("soft-first", InetAddress.getByName("127.0.0.1"));
        DeviceRegistry registry = new DeviceRegistry();
        MemoryOps ops = new MemoryOps(1 << 20);
        int port = SoftFixture.freePort();
        RtrsServer server = new RtrsServer(SoftFixture.smallServer(true, port), () -> ops, () -> null, timer,
                System::nanoTime);
        DeviceSet devices = new DeviceSet();
        ClientSession s = null;
        try {
            registry.addDevice(dev);
            registry.addClient(devices);
            PathAddress path = new PathAddress(dev.addresses().get(0), dev.addresses().get(0), port);
            s = new ClientSession(ClientConfig.of("boot", List.of(path)).withTimings(50, 0, 0, 5000, 5).withCons(1),
                    devices, () -> null, timer, System::nanoTime);
            ClientSession session = s;
            Await.until("two attempts refused", () -> session.pathInfo().get(0).reconnectAttempts() >= 2);

            registry.addClient(server); // the server starts listening
            Await.until("connected", () -> session.state() == SessionState.CONNECTED);
            RtrsClientPathInfo p = s.pathInfo().get(0);
            assertEquals(PathState.CONNECTED, p.state());
            assertEquals(0, p.stats().reconnectsFailed(), "failed reconnects of a path that had never connected");
            assertEquals(0, p.stats().reconnectsOk(), "its first connection is no reconnect");
            assertEquals(0, p.reconnectAttempts());

            // once it was connected, losing the connection and coming back is a reconnect
            registry.removeClient(server);
            Await.until("path lost", () -> session.pathInfo().get(0).state() != PathState.CONNECTED);
            Await.until("a reconnect failed", () -> session.pathInfo().get(0).stats().reconnectsFailed() >= 1);
            registry.addClient(server);
            Await.until("reconnected", () -> session.pathInfo().get(0).state() == PathState.CONNECTED);
            assertTrue(s.pathInfo().get(0).stats().reconnectsOk() == 1);
        } finally {
            if (s != null) {
                s.close();
            }
            registry.close();
            server.close();
            timer.shutdownNow();
            timer.awaitTermination(5, TimeUnit.SECONDS);
            dev.close();
        }
    }
}

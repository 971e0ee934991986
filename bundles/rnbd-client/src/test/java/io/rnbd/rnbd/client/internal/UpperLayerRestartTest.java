package io.rnbd.rnbd.client.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.core.internal.DeviceRegistry;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceState;
import io.rnbd.rnbd.server.internal.ExportConfig;
import io.rnbd.rnbd.server.internal.RnbdServer;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.rtrs.client.internal.ClientConfig;
import io.rnbd.rtrs.client.internal.ClientSession;
import io.rnbd.rtrs.client.internal.PathAddress;
import io.rnbd.rtrs.client.internal.RtrsClient;
import io.rnbd.rtrs.server.internal.RtrsServer;
import io.rnbd.rtrs.server.internal.ServerConfig;
import io.rnbd.testkit.Await;
import io.rnbd.testkit.block.FakeBackend;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The RNBD server behind a live RTRS server is replaced under verified IO, as
 * {@code bundle:restart rnbd-server} does in Karaf: the RTRS sessions stay up, requests that
 * arrive while there is no RNBD server wait for the next one, which knows none of the old
 * device ids, answers ENXIO, and the client opens again and resends. Every write succeeds
 * once and every block reads back as last written.
 */
class UpperLayerRestartTest {
    private static final int BLOCK = 64 * 1024;
    private static final int LANES = 6;
    private static final int ROUNDS = 40;

    private final List<AutoCloseable> closers = new ArrayList<>();
    private final ScheduledExecutorService timer = Executors.newScheduledThreadPool(2);
    private final AtomicReference<RtrsServerOps> upper = new AtomicReference<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closers.size() - 1; i >= 0; i--) {
            closers.get(i).close();
        }
        timer.shutdownNow();
        assertTrue(timer.awaitTermination(10, TimeUnit.SECONDS));
    }

    private RnbdServer rnbdServer(FakeBackend backend) {
        RnbdServer s = new RnbdServer(timer);
        s.backendAdded("memory", backend);
        s.addExport(new ExportConfig("disk", "memory", false, Set.of(), 0,
                Map.of("id", "disk", "size", Integer.toString(LANES * BLOCK))));
        return s;
    }

    @Test
    void ioSurvivesTheRnbdServerBeingReplaced() throws Exception {
        FakeBackend backend = new FakeBackend();
        RnbdServer first = rnbdServer(backend);
        upper.set(first);
        SoftDevice dev = new SoftDevice("restart-soft", InetAddress.getByName("127.0.0.1"));
        closers.add(dev::close);
        RtrsServer rtrsServer = new RtrsServer(new ServerConfig(0, 128 * 1024, 32, true, 5000, 5), upper::get,
                () -> null, timer, System::nanoTime);
        closers.add(rtrsServer::close);
        RtrsClient rtrsClient = new RtrsClient(timer, System::nanoTime);
        closers.add(rtrsClient::close);
        DeviceRegistry registry = new DeviceRegistry();
        closers.add(registry::close);
        registry.addDevice(dev);
        registry.addClient(rtrsServer);
        registry.addClient(rtrsClient.devices());
        InetSocketAddress a = rtrsServer.listenAddresses(dev).get(0);
        ClientSession session = rtrsClient.open(ClientConfig.of("restart",
                List.of(new PathAddress(a.getAddress(), a.getAddress(), a.getPort()))).withCons(2));
        Await.until("session connected", () -> session.state() == SessionState.CONNECTED, Duration.ofSeconds(10));
        RnbdClient client = new RnbdClient(DevicePublisher.NONE);
        closers.add(client::close);
        client.sessionAdded(session);
        RemoteBlockDevice d = client.map("rnbd0", "restart", "disk", AccessMode.RW).get(10, TimeUnit.SECONDS);

        byte[][] last = new byte[LANES][];
        AtomicInteger done = new AtomicInteger();
        // every lane stops a third of the way until the server is gone, so that writes are
        // still to come when it goes, however the machine schedules this thread
        CountDownLatch atGate = new CountDownLatch(LANES);
        CompletableFuture<Void> serverGone = new CompletableFuture<>();
        List<CompletableFuture<Void>> lanes = new ArrayList<>();
        for (int lane = 0; lane < LANES; lane++) {
            int b = lane;
            Random rnd = new Random(lane);
            CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
            for (int r = 0; r < ROUNDS; r++) {
                if (r == ROUNDS / 3) {
                    chain = chain.thenCompose(v -> {
                        atGate.countDown();
                        return serverGone;
                    });
                }
                chain = chain.thenCompose(v -> {
                    byte[] data = new byte[BLOCK];
                    rnd.nextBytes(data);
                    return d.write((long) b * BLOCK, ByteBuffer.wrap(data), false).thenRun(() -> {
                        last[b] = data;
                        done.incrementAndGet();
                    });
                });
            }
            lanes.add(chain);
        }
        assertTrue(atGate.await(20, TimeUnit.SECONDS), "every lane a third of the way");
        // what Karaf does on bundle:restart rnbd-server: unbind, deactivate, activate, bind
        upper.set(null);
        rtrsServer.upperLayerChanged();
        first.close();
        serverGone.complete(null);
        // the lanes keep writing: the restart is only tested once requests wait for it
        Await.until("a request waiting for the RNBD server", () -> rtrsServer.waitingForUpperLayer() > 0,
                Duration.ofSeconds(20));
        RnbdServer second = rnbdServer(backend);
        closers.add(second::close);
        upper.set(second);
        rtrsServer.upperLayerChanged();
        for (CompletableFuture<Void> l : lanes) {
            l.get(30, TimeUnit.SECONDS);
        }
        assertEquals(LANES * ROUNDS, done.get(), "every write succeeded once");
        assertEquals(DeviceState.MAPPED, client.devices().get(0).state());
        assertEquals(1, second.exports().get(0).openers().size(), "open on the new server");
        for (int b = 0; b < LANES; b++) {
            ByteBuffer got = ByteBuffer.allocate(BLOCK);
            d.read((long) b * BLOCK, got).get(10, TimeUnit.SECONDS);
            assertArrayEquals(last[b], got.array(), "block " + b);
            byte[] stored = new byte[BLOCK];
            System.arraycopy(backend.store("disk"), b * BLOCK, stored, 0, BLOCK);
            assertArrayEquals(last[b], stored, "block " + b + " in the backend");
        }
    }
}

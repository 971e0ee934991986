package io.rnbd.rdma.disni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.core.internal.DeviceRegistry;
import io.rnbd.rdma.disni.internal.DisniDevice;
import io.rnbd.rdma.disni.internal.DisniSettings;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.client.internal.DevicePublisher;
import io.rnbd.rnbd.client.internal.RnbdClient;
import io.rnbd.rnbd.server.internal.ExportConfig;
import io.rnbd.rnbd.server.internal.RnbdServer;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
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
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * RNBD over RTRS over real verbs (soft-RoCE in the rxe VM): RNBD server and client, RTRS
 * server and client in one JVM on the DiSNI devices carrying $RDMA_TEST_ADDR and
 * $RDMA_TEST_ADDR2 (rxe0, rxe1), handed to both IB clients by rdma-core's registry. The
 * session has two paths, one per device: the server refuses a second path between the same
 * two addresses (EEXIST, as Linux).
 * Verified random IO at queue depth 8 runs while one path is disconnected; nothing may
 * fail or be lost. Skipped with the reason where there is no RDMA device.
 */
class DisniRnbdEndToEndTest {
    private static final Duration WAIT = RdmaTestEnv.timeout(Duration.ofSeconds(10));
    private static final long HB_INTERVAL_MS = 5000;
    /** 25 s of silence on the host, stretched like every other wait: emulation stalls are not path failures. */
    private static final int HB_MISSED_MAX = (int) (RdmaTestEnv.timeout(Duration.ofSeconds(25)).toMillis() / HB_INTERVAL_MS);
    private static final int SIZE = 4 << 20;
    private static final int LANES = 8;
    private static final int STEPS = 24;
    private static final int MAX_IO = 32 << 10;

    /** Closed in reverse order of creation. */
    private final Deque<AutoCloseable> closers = new ArrayDeque<>();

    @AfterEach
    void closeAll() throws Exception {
        Exception first = null;
        while (!closers.isEmpty()) {
            try {
                closers.pop().close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    private static ScheduledExecutorService executor(int threads) {
        return Executors.newScheduledThreadPool(threads);
    }

    private void closing(ScheduledExecutorService e) {
        closers.push(() -> {
            e.shutdownNow();
            assertTrue(e.awaitTermination(WAIT.toMillis(), TimeUnit.MILLISECONDS), "executor did not stop");
        });
    }

    private static InetSocketAddress listeningOn(RtrsServer server, DisniDevice device, InetAddress addr) {
        return server.listenAddresses(device).stream().filter(a -> a.getAddress().equals(addr)).findFirst()
                .orElseThrow(() -> new AssertionError("rtrs-server does not listen on " + addr.getHostAddress()
                        + ": " + server.listenAddresses(device)));
    }

    @Test
    void verifiedRandomIoFailsOverWhenAPathIsDisconnected() throws Exception {
        DisniDevice device = DisniDevice.open(RdmaTestEnv.device(),
                new DisniSettings((int) RdmaTestEnv.timeout(Duration.ofSeconds(5)).toMillis()));
        closers.push(device::close);
        // a second path needs a second pair of addresses: RTRS refuses two paths between the same
        // two addresses (Linux's __is_path_w_addr_exists, EEXIST)
        DisniDevice device2 = DisniDevice.open(RdmaTestEnv.device2(),
                new DisniSettings((int) RdmaTestEnv.timeout(Duration.ofSeconds(5)).toMillis()));
        closers.push(device2::close);
        ScheduledExecutorService rtrsTimer = executor(2);
        closing(rtrsTimer);
        ScheduledExecutorService rnbdTimer = executor(1);
        closing(rnbdTimer);

        FakeBackend backend = new FakeBackend();
        RnbdServer rnbdServer = new RnbdServer(rnbdTimer);
        closers.push(rnbdServer::close);
        rnbdServer.backendAdded("memory", backend);
        rnbdServer.addExport(new ExportConfig("disk", "memory", false, Set.of(), 0,
                Map.of("id", "disk", "size", Integer.toString(SIZE))));

        RtrsServer rtrsServer = new RtrsServer(new ServerConfig(0, 64 << 10, 32, true, HB_INTERVAL_MS, HB_MISSED_MAX),
                () -> rnbdServer, () -> null, rtrsTimer, System::nanoTime);
        closers.push(rtrsServer::close);
        // the client's sessions close before the registry takes the device from both sides
        DeviceRegistry registry = new DeviceRegistry();
        closers.push(registry::close);
        RtrsClient rtrsClient = new RtrsClient(rtrsTimer, System::nanoTime);
        closers.push(rtrsClient::close);
        registry.addDevice(device);
        registry.addDevice(device2);
        registry.addClient(rtrsServer);
        registry.addClient(rtrsClient.devices());

        InetSocketAddress listening = listeningOn(rtrsServer, device, RdmaTestEnv.address());
        InetSocketAddress listening2 = listeningOn(rtrsServer, device2, RdmaTestEnv.address2());
        PathAddress anySource = new PathAddress(null, listening.getAddress(), listening.getPort());
        PathAddress fromAddr2 = new PathAddress(listening2.getAddress(), listening2.getAddress(), listening2.getPort());
        assertNotEquals(anySource.name(), fromAddr2.name());
        ClientSession session = rtrsClient.open(ClientConfig.of("disni-e2e", List.of(anySource, fromAddr2))
                .withTimings(500, 0, 0, HB_INTERVAL_MS, HB_MISSED_MAX).withCons(2));
        // real IO over real verbs: no fake time here
        Await.until("both paths connected",
                () -> session.pathInfo().stream().allMatch(p -> p.state() == PathState.CONNECTED), WAIT);
        assertEquals(SessionState.CONNECTED, session.state());

        RnbdClient rnbdClient = new RnbdClient(DevicePublisher.NONE);
        closers.push(rnbdClient::close);
        rnbdClient.sessionAdded(session);
        RemoteBlockDevice disk = get(rnbdClient.map("rnbd0", session.name(), "disk", AccessMode.RW));
        assertEquals(SIZE, disk.size());

        byte[] shadow = new byte[SIZE];
        AtomicInteger writesAcked = new AtomicInteger();
        AtomicInteger verified = new AtomicInteger();
        CompletableFuture<Void> halfway = new CompletableFuture<>();
        Random seeds = new Random(20261122);
        List<CompletableFuture<Void>> lanes = new ArrayList<>();
        for (int i = 0; i < LANES; i++) {
            lanes.add(lane(disk, i * (SIZE / LANES), SIZE / LANES, new Random(seeds.nextLong()), shadow,
                    writesAcked, verified, halfway));
        }
        get(halfway);
        // Kill a path that has IO in flight right now if there is one, so its requests must fail over.
        List<RtrsClientPathInfo> before = session.pathInfo();
        RtrsClientPathInfo victim = before.stream().filter(p -> p.stats().io().inflight() > 0).findFirst()
                .orElse(before.get(1));
        session.disconnectPath(victim.name());
        String survivor = before.stream().map(RtrsClientPathInfo::name).filter(n -> !n.equals(victim.name()))
                .findFirst().orElseThrow();
        assertNotEquals(PathState.CONNECTED, path(session, victim.name()).state(), "disconnected path");

        for (CompletableFuture<Void> l : lanes) {
            get(l);
        }
        assertEquals(LANES * STEPS, writesAcked.get(), "every write acknowledged once");
        assertEquals(LANES * STEPS, verified.get(), "every read-back compared");
        assertEquals(SessionState.CONNECTED, session.state());
        assertEquals(PathState.CONNECTED, path(session, survivor).state());
        RtrsClientPathInfo killed = path(session, victim.name());
        assertNotEquals(PathState.CONNECTED, killed.state(), "a disconnected path stays down until reconnected");
        assertTrue(victim.stats().io().writes() + victim.stats().io().reads() > 0,
                "the killed path carried IO before: " + victim);
        var stats = rnbdClient.devices().get(0).stats();
        assertEquals(0, stats.errors(), "IO errors");
        assertEquals(0, stats.inflight());
        assertArrayEquals(shadow, backend.store("disk"), "the server's disk holds exactly what was acknowledged");

        // The path comes back and carries IO again: the whole disk reads back as written.
        session.reconnectPath(victim.name());
        Await.until("the disconnected path reconnected",
                () -> path(session, victim.name()).state() == PathState.CONNECTED, WAIT);
        for (int off = 0; off < SIZE; off += MAX_IO) {
            ByteBuffer dst = ByteBuffer.allocate(MAX_IO);
            get(disk.read(off, dst));
            assertArrayEquals(Arrays.copyOfRange(shadow, off, off + MAX_IO), dst.array(), "disk content at " + off);
        }
    }

    /**
     * One lane (its own part of the disk): write a random range, read it back and compare,
     * STEPS times; a write reaches the shadow only once it is acknowledged.
     */
    private static CompletableFuture<Void> lane(RemoteBlockDevice d, int base, int size, Random r, byte[] shadow,
                                                AtomicInteger writesAcked, AtomicInteger verified,
                                                CompletableFuture<Void> halfway) {
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (int s = 0; s < STEPS; s++) {
            int len = (1 + r.nextInt(MAX_IO / 512)) * 512;
            int off = base + r.nextInt((size - len) / 512 + 1) * 512;
            byte[] data = new byte[len];
            r.nextBytes(data);
            chain = chain.thenCompose(v -> d.write(off, ByteBuffer.wrap(data), false))
                    .thenRun(() -> {
                        System.arraycopy(data, 0, shadow, off, len);
                        if (writesAcked.incrementAndGet() == LANES * STEPS / 2) {
                            halfway.complete(null);
                        }
                    })
                    .thenCompose(v -> {
                        ByteBuffer dst = ByteBuffer.allocate(len);
                        return d.read(off, dst).thenRun(() -> {
                            if (!Arrays.equals(dst.array(), data)) {
                                throw new AssertionError("read-back of " + off + "+" + len + " differs");
                            }
                            verified.incrementAndGet();
                        });
                    });
        }
        return chain.whenComplete((v, t) -> {
            if (t != null) {
                halfway.completeExceptionally(t);
            }
        });
    }

    private static RtrsClientPathInfo path(ClientSession s, String name) {
        return s.pathInfo().stream().filter(p -> p.name().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no path " + name));
    }

    private static <T> T get(CompletableFuture<T> f) throws Exception {
        try {
            return f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception x) {
                throw x;
            }
            throw e;
        }
    }
}

package io.rnbd.rnbd.client.internal;

import io.rnbd.rdma.core.internal.DeviceRegistry;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.api.RtrsClientSession;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.rtrs.client.internal.ClientConfig;
import io.rnbd.rtrs.client.internal.ClientSession;
import io.rnbd.rtrs.client.internal.PathAddress;
import io.rnbd.rtrs.client.internal.RtrsClient;
import io.rnbd.rtrs.server.internal.RtrsServer;
import io.rnbd.rtrs.server.internal.ServerConfig;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The same RNBD scenario as {@link FakeTransportEndToEndTest}, over the real stack: RNBD
 * client and server, RTRS client and server, and two soft RDMA devices (127.0.0.1 and
 * 127.0.0.2) handed to both IB clients by rdma-core's registry, so every session has two
 * paths and IO is spread over both by the multipath policy.
 */
class SoftRtrsEndToEndTest extends RnbdEndToEndScenario {
    /** Kernel-default chunk (128 KiB), a small queue depth to keep the test's memory low. */
    private static final ServerConfig SERVER = new ServerConfig(0, 128 * 1024, 64, true, 5000, 5);

    /** IO threads per soft device. */
    protected int ioThreads() {
        return 1;
    }

    @Override
    protected Transport transport(RtrsServerOps ops) throws Exception {
        ScheduledExecutorService timer = Executors.newScheduledThreadPool(2);
        SoftDevice dev1 = new SoftDevice("e2e-soft1", InetAddress.getByName("127.0.0.1"), ioThreads());
        SoftDevice dev2 = new SoftDevice("e2e-soft2", InetAddress.getByName("127.0.0.2"), ioThreads());
        RtrsServer rtrsServer = new RtrsServer(SERVER, () -> ops, () -> null, timer, System::nanoTime);
        RtrsClient rtrsClient = new RtrsClient(timer, System::nanoTime);
        DeviceRegistry registry = new DeviceRegistry();
        registry.addDevice(dev1);
        registry.addDevice(dev2);
        registry.addClient(rtrsServer);
        registry.addClient(rtrsClient.devices());
        List<ClientSession> sessions = new ArrayList<>();
        return new Transport() {
            @Override
            public RtrsClientSession connect(String name) throws Exception {
                List<PathAddress> paths = new ArrayList<>();
                for (SoftDevice d : List.of(dev1, dev2)) {
                    InetSocketAddress a = rtrsServer.listenAddresses(d).get(0);
                    paths.add(new PathAddress(a.getAddress(), a.getAddress(), a.getPort()));
                }
                ClientSession s = rtrsClient.open(ClientConfig.of(name, paths).withCons(2));
                sessions.add(s);
                CountDownLatch up = new CountDownLatch(1);
                s.addListener((session, state, errno) -> {
                    if (state == SessionState.CONNECTED) {
                        up.countDown();
                    }
                });
                if (s.state() != SessionState.CONNECTED && !up.await(TIMEOUT_S, TimeUnit.SECONDS)) {
                    throw new AssertionError("session " + name + " did not connect: " + s.state());
                }
                return s;
            }

            @Override
            public void close() throws Exception {
                for (ClientSession s : sessions) {
                    s.close();
                }
                rtrsClient.close();
                registry.close();
                rtrsServer.close();
                dev1.close();
                dev2.close();
                timer.shutdownNow();
                if (!timer.awaitTermination(10, TimeUnit.SECONDS)) {
                    throw new AssertionError("RTRS timer did not stop");
                }
            }
        };
    }
}

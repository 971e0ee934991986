package io.rnbd.bench;

import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.rtrs.client.ClientConfig;
import io.rnbd.rtrs.client.ClientSession;
import io.rnbd.rtrs.client.DeviceSet;
import io.rnbd.rtrs.client.PathAddress;
import io.rnbd.rtrs.server.RtrsServer;
import io.rnbd.rtrs.server.ServerConfig;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * An RTRS server and one client session in this JVM over two soft devices on loopback
 * (server 127.0.0.1, client 127.0.0.2), wired as the device registry would: one path, the
 * client's default connections per path (one per CPU), no authenticator.
 */
final class SoftStack implements AutoCloseable {
    static final String SESSION = "bench";
    /** IO threads per soft device, as the device configuration's io.threads (-Drnbd.bench.io.threads). */
    static final int IO_THREADS = Integer.getInteger("rnbd.bench.io.threads", 1);

    final SoftDevice serverDev;
    final SoftDevice clientDev;
    final ScheduledExecutorService timer;
    final RtrsServer server;
    final DeviceSet devices = new DeviceSet();
    final ClientSession session;

    SoftStack(ServerConfig cfg, RtrsServerOps ops) throws Exception {
        serverDev = new SoftDevice("bench-srv", InetAddress.getByName("127.0.0.1"), IO_THREADS);
        clientDev = new SoftDevice("bench-clt", InetAddress.getByName("127.0.0.2"), IO_THREADS);
        timer = Executors.newScheduledThreadPool(1, r -> {
            Thread t = new Thread(r, "bench-timer");
            t.setDaemon(true);
            return t;
        });
        server = new RtrsServer(cfg.withPort(0), () -> ops, () -> null, timer, System::nanoTime);
        server.add(serverDev);
        devices.add(clientDev);
        InetSocketAddress at = server.listenAddresses(serverDev).get(0);
        PathAddress path = new PathAddress(clientDev.address(), at.getAddress(), at.getPort());
        session = new ClientSession(ClientConfig.of(SESSION, List.of(path)), devices, () -> null, timer,
                System::nanoTime);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (session.state() != SessionState.CONNECTED) {
            if (System.nanoTime() > deadline) {
                close();
                throw new IllegalStateException("RTRS session not connected: " + session.state()
                        + " errno " + session.lastError());
            }
            Thread.sleep(10);
        }
    }

    @Override
    public void close() throws InterruptedException {
        session.close();
        server.close();
        timer.shutdownNow();
        timer.awaitTermination(5, TimeUnit.SECONDS);
        clientDev.close();
        serverDev.close();
    }
}

package io.rnbd.bench;

import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.api.RtrsSessionListener;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.rtrs.client.internal.ClientConfig;
import io.rnbd.rtrs.client.internal.ClientSession;
import io.rnbd.rtrs.client.internal.DeviceSet;
import io.rnbd.rtrs.client.internal.PathAddress;
import io.rnbd.rtrs.mp.mininflight.internal.MinInflightPolicy;
import io.rnbd.rtrs.server.internal.RtrsServer;
import io.rnbd.rtrs.server.internal.ServerConfig;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * An RTRS server and one client session in this JVM on whatever devices they are given (the
 * same device may serve both sides, as one rxe device does in the guest and each soft device
 * does in the appliance's default profile): one path per pair of (client device, server
 * device), from the client device's first address, the client's default connections per
 * path, the min-inflight policy, no authenticator. Closing it leaves the devices open.
 */
final class DeviceStack implements AutoCloseable {
    final ScheduledExecutorService timer;
    final RtrsServer server;
    final DeviceSet devices = new DeviceSet();
    final ClientSession session;

    DeviceStack(String name, ServerConfig cfg, RtrsServerOps ops, RdmaDevice serverDev, RdmaDevice clientDev,
                Duration connectWait) throws Exception {
        this(name, cfg, ops, List.of(serverDev), List.of(clientDev), connectWait);
    }

    /** One path from {@code clientDevs[i]} to {@code serverDevs[i]} for every i. */
    DeviceStack(String name, ServerConfig cfg, RtrsServerOps ops, List<? extends RdmaDevice> serverDevs,
                List<? extends RdmaDevice> clientDevs, Duration connectWait) throws Exception {
        timer = Executors.newScheduledThreadPool(1, r -> {
            Thread t = new Thread(r, "bench-timer-" + name);
            t.setDaemon(true);
            return t;
        });
        server = new RtrsServer(cfg.withPort(0), () -> ops, () -> null, timer, System::nanoTime);
        List<PathAddress> paths = new java.util.ArrayList<>();
        for (int i = 0; i < serverDevs.size(); i++) {
            RdmaDevice serverDev = serverDevs.get(i);
            RdmaDevice clientDev = clientDevs.get(i);
            if (server.listenAddresses(serverDev).isEmpty()) {
                server.add(serverDev);
            }
            devices.add(clientDev);
            InetSocketAddress at = server.listenAddresses(serverDev).get(0);
            paths.add(new PathAddress(clientDev.addresses().get(0), at.getAddress(), at.getPort()));
        }
        session = new ClientSession(ClientConfig.of(name, paths)
                .withTimings(500, 0, 0, cfg.hbIntervalMs(), cfg.hbMissedMax()), devices, () -> null, timer,
                System::nanoTime);
        session.policies(List.of(new MinInflightPolicy()));
        CountDownLatch connected = new CountDownLatch(1);
        RtrsSessionListener onConnected = (s, state, errno) -> {
            if (state == SessionState.CONNECTED) {
                connected.countDown();
            }
        };
        session.addListener(onConnected);
        try {
            if (session.state() != SessionState.CONNECTED
                    && !connected.await(connectWait.toNanos(), TimeUnit.NANOSECONDS)) {
                close();
                throw new IllegalStateException(name + ": RTRS session not connected: " + session.state()
                        + " errno " + session.lastError());
            }
        } finally {
            session.removeListener(onConnected);
        }
    }

    @Override
    public void close() throws InterruptedException {
        session.close();
        server.close();
        timer.shutdownNow();
        timer.awaitTermination(5, TimeUnit.SECONDS);
    }
}

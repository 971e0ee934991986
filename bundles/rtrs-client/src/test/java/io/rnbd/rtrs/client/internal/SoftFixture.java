package io.rnbd.rtrs.client.internal;

import io.rnbd.rdma.core.internal.DeviceRegistry;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.server.internal.RtrsServer;
import io.rnbd.rtrs.server.internal.ServerConfig;
import io.rnbd.testkit.ExternalTools;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Two soft RDMA devices (127.0.0.1, 127.0.0.2) shared by an RTRS server and an RTRS
 * client in one JVM, handed over by rdma-core's device registry.
 */
final class SoftFixture implements AutoCloseable {
    final SoftDevice dev1;
    final SoftDevice dev2;
    final MemoryOps ops = new MemoryOps(4 << 20);
    final AtomicReference<io.rnbd.rtrs.api.Authenticator> serverAuth = new AtomicReference<>();
    final AtomicReference<io.rnbd.rtrs.api.Authenticator> clientAuth = new AtomicReference<>();
    final ScheduledExecutorService timer = Executors.newScheduledThreadPool(2);
    final RtrsServer server;
    final DeviceSet devices = new DeviceSet();
    /** The real device registry (rdma-core) hands the devices to both IB clients. */
    final DeviceRegistry registry = new DeviceRegistry();
    final List<ClientSession> sessions = new ArrayList<>();

    /** A port the server can listen on with both devices (a port free on one may be held on the other). */
    static int freePort() throws java.io.IOException {
        return ExternalTools.freePortOn(InetAddress.getByName("127.0.0.1"), InetAddress.getByName("127.0.0.2"));
    }

    SoftFixture(ServerConfig cfg) throws Exception {
        dev1 = new SoftDevice("soft-t1", InetAddress.getByName("127.0.0.1"));
        dev2 = new SoftDevice("soft-t2", InetAddress.getByName("127.0.0.2"));
        server = new RtrsServer(cfg, () -> ops, serverAuth::get, timer, System::nanoTime);
        // devices before clients on purpose: any order must work
        registry.addDevice(dev1);
        registry.addDevice(dev2);
        registry.addClient(server);
        registry.addClient(devices);
    }

    static ServerConfig smallServer(boolean alwaysInvalidate) {
        return new ServerConfig(0, 16384, 64, alwaysInvalidate, 5000, 5);
    }

    static ServerConfig smallServer(boolean alwaysInvalidate, int port) {
        return new ServerConfig(port, 16384, 64, alwaysInvalidate, 5000, 5);
    }

    PathAddress path(SoftDevice d) {
        List<InetSocketAddress> at = server.listenAddresses(d);
        if (at.isEmpty()) {
            // the server logged why (rtrs-server cannot listen on ...); say so here, not as an index error
            throw new IllegalStateException("the server does not listen on " + d.name() + " (port in use?)");
        }
        InetSocketAddress a = at.get(0);
        return new PathAddress(a.getAddress(), a.getAddress(), a.getPort());
    }

    ClientConfig config(String name, PathAddress... paths) {
        return ClientConfig.of(name, List.of(paths)).withTimings(50, 0, 0, 5000, 5).withCons(2);
    }

    ClientSession open(ClientConfig cfg) {
        return open(cfg, timer, System::nanoTime);
    }

    ClientSession open(ClientConfig cfg, java.util.concurrent.ScheduledExecutorService t,
                       java.util.function.LongSupplier nanos) {
        ClientSession s = new ClientSession(cfg, devices, clientAuth::get, t, nanos);
        sessions.add(s);
        return s;
    }

    @Override
    public void close() throws Exception {
        sessions.forEach(ClientSession::close);
        registry.close();
        server.close();
        timer.shutdownNow();
        timer.awaitTermination(5, TimeUnit.SECONDS);
        dev1.close();
        dev2.close();
    }
}

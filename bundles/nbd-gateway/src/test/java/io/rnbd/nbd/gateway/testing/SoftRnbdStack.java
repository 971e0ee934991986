package io.rnbd.nbd.gateway.testing;

import io.rnbd.nbd.gateway.internal.DeviceExports;
import io.rnbd.nbd.gateway.internal.NbdServer;
import io.rnbd.nbd.gateway.internal.NbdServerConfig;
import io.rnbd.rdma.core.internal.DeviceRegistry;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.backend.memory.internal.MemoryBackend;
import io.rnbd.rnbd.client.internal.DevicePublisher;
import io.rnbd.rnbd.client.internal.RnbdClient;
import io.rnbd.rnbd.client.internal.RnbdClientDevice;
import io.rnbd.rnbd.server.internal.ExportConfig;
import io.rnbd.rnbd.server.internal.RnbdServer;
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
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The appliance's data path in one JVM, minus OSGi: the memory backend behind RNBD server
 * exports, RTRS server and client over two soft RDMA devices (127.0.0.1 and 127.0.0.2, one
 * path each), the RNBD client mapping exports, and nbd-gateway's server exporting every
 * mapped device under its name as the DS component does (a device published by the client
 * becomes an export, a withdrawn one ends its connections).
 */
public final class SoftRnbdStack implements AutoCloseable {
    public static final String SESSION = "gw";

    public final ScheduledExecutorService scheduler;
    public final MemoryBackend memory = new MemoryBackend();
    public final RnbdServer rnbdServer;
    public final RnbdClient rnbdClient;
    public final DeviceExports exports = new DeviceExports();
    public final NbdServer nbd;
    private final SoftDevice dev1;
    private final SoftDevice dev2;
    private final RtrsServer rtrsServer;
    private final RtrsClient rtrsClient;
    private final DeviceRegistry registry = new DeviceRegistry();
    private final ClientSession session;

    /** @param chunkSize the RTRS server's chunk size (max IO = chunk - 4 KiB) */
    public SoftRnbdStack(int chunkSize) throws Exception {
        this(chunkSize, NbdServerConfig.of(new InetSocketAddress("127.0.0.1", 0), null));
    }

    public SoftRnbdStack(int chunkSize, NbdServerConfig nbdConfig) throws Exception {
        scheduler = Executors.newScheduledThreadPool(2);
        rnbdServer = new RnbdServer(scheduler);
        rnbdServer.backendAdded(MemoryBackend.TYPE, memory);
        dev1 = new SoftDevice("gw-soft1", InetAddress.getByName("127.0.0.1"), 1);
        dev2 = new SoftDevice("gw-soft2", InetAddress.getByName("127.0.0.2"), 1);
        rtrsServer = new RtrsServer(new ServerConfig(0, chunkSize, 64, true, 5000, 5), () -> rnbdServer, () -> null,
                scheduler, System::nanoTime);
        rtrsClient = new RtrsClient(scheduler, System::nanoTime);
        registry.addDevice(dev1);
        registry.addDevice(dev2);
        registry.addClient(rtrsServer);
        registry.addClient(rtrsClient.devices());
        nbd = new NbdServer(nbdConfig, exports);
        rnbdClient = new RnbdClient(new DevicePublisher() {
            @Override
            public void publish(io.rnbd.rnbd.api.RemoteBlockDevice device) {
                exports.add(device.name(), device);
            }

            @Override
            public void withdraw(io.rnbd.rnbd.api.RemoteBlockDevice device) {
                if (exports.remove(device.name(), device)) {
                    nbd.exportRemoved(device);
                }
            }
        });
        List<PathAddress> paths = new ArrayList<>();
        for (SoftDevice d : List.of(dev1, dev2)) {
            InetSocketAddress a = rtrsServer.listenAddresses(d).get(0);
            paths.add(new PathAddress(a.getAddress(), a.getAddress(), a.getPort()));
        }
        session = rtrsClient.open(ClientConfig.of(SESSION, paths).withCons(1));
        CountDownLatch up = new CountDownLatch(1);
        session.addListener((s, state, errno) -> {
            if (state == SessionState.CONNECTED) {
                up.countDown();
            }
        });
        if (session.state() != SessionState.CONNECTED && !up.await(30, TimeUnit.SECONDS)) {
            close();
            throw new AssertionError("RTRS session did not connect: " + session.state());
        }
        rnbdClient.sessionAdded(session);
    }

    /** A memory export of {@code size} bytes. */
    public SoftRnbdStack export(String name, long size) {
        rnbdServer.addExport(new ExportConfig(name, MemoryBackend.TYPE, false, Set.of(), 0,
                Map.of("size", Long.toString(size))));
        return this;
    }

    /** Maps {@code export} as {@code device} and waits until it is open. */
    public RemoteBlockDevice map(String device, String export) throws Exception {
        return rnbdClient.map(device, SESSION, export, AccessMode.RW).get(30, TimeUnit.SECONDS);
    }

    public InetSocketAddress nbdAddress() {
        return nbd.tcpAddress();
    }

    /** For exports on another backend. */
    public void backend(BlockBackend backend) {
        rnbdServer.backendAdded(backend.type(), backend);
    }

    @Override
    public void close() throws Exception {
        nbd.close();
        rnbdClient.close();
        session.close();
        rtrsClient.close();
        registry.close();
        rtrsServer.close();
        rnbdServer.close();
        memory.close();
        dev1.close();
        dev2.close();
        scheduler.shutdownNow();
        if (!scheduler.awaitTermination(10, TimeUnit.SECONDS)) {
            throw new AssertionError("scheduler did not stop");
        }
    }
}

package io.rnbd.rxe.interop;

import io.rnbd.rdma.core.internal.DeviceRegistry;
import io.rnbd.rdma.disni.internal.DisniDevice;
import io.rnbd.rdma.disni.internal.DisniRuntime;
import io.rnbd.rdma.disni.internal.DisniSettings;
import io.rnbd.rdma.disni.internal.SysfsDevice;
import io.rnbd.rdma.disni.internal.SysfsScanner;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.client.DevicePublisher;
import io.rnbd.rnbd.client.RnbdClient;
import io.rnbd.rnbd.server.ExportConfig;
import io.rnbd.rnbd.server.RnbdServer;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.client.ClientConfig;
import io.rnbd.rtrs.client.ClientSession;
import io.rnbd.rtrs.client.PathAddress;
import io.rnbd.rtrs.client.RtrsClient;
import io.rnbd.rtrs.server.RtrsServer;
import io.rnbd.rtrs.server.ServerConfig;
import io.rnbd.testkit.Await;
import io.rnbd.testkit.block.FakeBackend;
import io.rnbd.testkit.block.FakeSharedBackend;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The appliance in one JVM without OSGi, on the guest's soft-RoCE devices through the DiSNI
 * provider: rdma-core's registry hands the devices to an RTRS server (with an RNBD server and
 * a memory backend behind it) and to an RTRS client (with an RNBD client on top), wired the
 * way the OSGi components wire them (DisniRnbdEndToEndTest does the same). Either half can be
 * used alone: the server to be mapped by Linux's rnbd-client, the client to map Linux's
 * rnbd-server export, or both together.
 *
 * <p>Everything is closed in reverse order of creation by {@link #close()}.
 */
public final class Appliance implements AutoCloseable {
    private static final long HB_INTERVAL_MS = 5000;
    /** 25 s of heartbeat silence on the host, stretched like every wait: emulation stalls are not path failures. */
    private static final int HB_MISSED_MAX = (int) (Guest.timeout(Duration.ofSeconds(25)).toMillis() / HB_INTERVAL_MS);

    private final Deque<AutoCloseable> closers = new ArrayDeque<>();
    private final List<DisniDevice> devices = new ArrayList<>();
    private final DeviceRegistry registry = new DeviceRegistry();
    private final FakeBackend backend = new FakeBackend();
    private final RnbdServer rnbdServer;
    private final RtrsServer rtrsServer;
    private final RtrsClient rtrsClient;
    private final RnbdClient rnbdClient;

    private Appliance(List<String> addresses, int port, boolean alwaysInvalidate) throws Exception {
        try {
            ScheduledExecutorService rtrsTimer = executor(2);
            ScheduledExecutorService rnbdTimer = executor(1);
            rnbdServer = new RnbdServer(rnbdTimer);
            closers.push(rnbdServer::close);
            rnbdServer.backendAdded("memory", backend);
            rtrsServer = new RtrsServer(new ServerConfig(port, ServerConfig.DEFAULT_CHUNK_SIZE, 64, alwaysInvalidate,
                    HB_INTERVAL_MS, HB_MISSED_MAX),
                    () -> rnbdServer, () -> null, rtrsTimer, System::nanoTime);
            closers.push(rtrsServer::close);
            // the client's sessions close before the registry takes the devices from both sides
            closers.push(registry::close);
            rtrsClient = new RtrsClient(rtrsTimer, System::nanoTime);
            closers.push(rtrsClient::close);
            rnbdClient = new RnbdClient(DevicePublisher.NONE);
            closers.push(rnbdClient::close);
            for (String a : addresses) {
                DisniDevice d = DisniDevice.open(device(a), new DisniSettings((int) Guest.timeout(Duration.ofSeconds(5)).toMillis()));
                devices.add(d);
                registry.addDevice(d);
            }
            registry.addClient(rtrsServer);
            registry.addClient(rtrsClient.devices());
        } catch (Exception | Error e) {
            close();
            throw e;
        }
    }

    /**
     * The appliance on the DiSNI devices carrying these addresses; the RTRS server listens on
     * each address at {@code port} (0: any free port, see {@link #listening}).
     */
    public static Appliance onDisni(List<String> addresses, int port) throws Exception {
        return onDisni(addresses, port, true);
    }

    /**
     * As {@link #onDisni(List, int)}, the RTRS server's always_invalidate as given (the default
     * 256 KiB chunks, so Linux's client meets the appliance's chunk size; queue depth 64).
     */
    public static Appliance onDisni(List<String> addresses, int port, boolean alwaysInvalidate) throws Exception {
        Optional<String> noNative = new DisniRuntime().unavailableReason();
        Guest.require(noNative.isEmpty(), "DiSNI cannot run here: " + noNative.orElse(""));
        return new Appliance(addresses, port, alwaysInvalidate);
    }

    private ScheduledExecutorService executor(int threads) {
        ScheduledExecutorService e = Executors.newScheduledThreadPool(threads);
        closers.push(() -> {
            e.shutdownNow();
            if (!e.awaitTermination(Guest.timeout(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("executor did not stop");
            }
        });
        return e;
    }

    /** The soft-RoCE device whose netdev carries {@code address}, or skip/fail. */
    static SysfsDevice device(String address) throws UnknownHostException {
        InetAddress a = InetAddress.getByName(address);
        Optional<SysfsDevice> d = new SysfsScanner(Path.of("/sys/class/infiniband")).scan().values().stream()
                .filter(x -> x.addresses().contains(a)).findFirst();
        Guest.require(d.isPresent(), "no RDMA device under /sys/class/infiniband carries " + address);
        return d.get();
    }

    public FakeBackend backend() {
        return backend;
    }

    public RnbdServer rnbdServer() {
        return rnbdServer;
    }

    public RtrsServer rtrsServer() {
        return rtrsServer;
    }

    public RtrsClient rtrsClient() {
        return rtrsClient;
    }

    public RnbdClient rnbdClient() {
        return rnbdClient;
    }

    /** An export {@code name} of {@code size} bytes on the memory backend (its bytes: {@code backend().store(name)}). */
    public void exportMemory(String name, int size) throws Exception {
        rnbdServer.addExport(new ExportConfig(name, "memory", false, Set.of(), 0,
                Map.of("id", name, "size", Integer.toString(size))));
    }

    /**
     * An export {@code name} that several servers serve ({@code ha = true}) on {@code cluster}, the
     * in-memory stand-in of a Ceph cluster's image, lock and blocklist: appliances given the same
     * cluster serve the same bytes, one of them active. Call once per appliance.
     */
    public void exportShared(String name, int size, FakeSharedBackend.Cluster cluster, String serverName) {
        rnbdServer.serverName(serverName);
        rnbdServer.backendAdded("shared", new FakeSharedBackend(cluster, "shared"));
        rnbdServer.addExport(new ExportConfig(name, "shared", false, Set.of(), 0,
                Map.of("image", name, "size", Integer.toString(size))).withHa(true));
    }

    /** Where the RTRS server listens on the device carrying {@code address}. */
    public InetSocketAddress listening(String address) throws UnknownHostException {
        InetAddress a = InetAddress.getByName(address);
        for (DisniDevice d : devices) {
            for (InetSocketAddress l : rtrsServer.listenAddresses(d)) {
                if (l.getAddress().equals(a)) {
                    return l;
                }
            }
        }
        throw new AssertionError("rtrs-server does not listen on " + address);
    }

    /**
     * Opens an RTRS session with one path per destination, each from the device carrying
     * that address (src = dst: the path is reached through that device), and waits until all
     * are connected.
     */
    public ClientSession connect(String sessname, List<InetSocketAddress> destinations) throws Exception {
        List<PathAddress> paths = new ArrayList<>();
        for (InetSocketAddress d : destinations) {
            paths.add(new PathAddress(d.getAddress(), d.getAddress(), d.getPort()));
        }
        ClientSession s = rtrsClient.open(ClientConfig.of(sessname, paths)
                .withTimings(500, 0, 0, HB_INTERVAL_MS, HB_MISSED_MAX).withCons(2));
        Await.until("every path of " + sessname + " connected",
                () -> s.pathInfo().stream().allMatch(p -> p.state() == PathState.CONNECTED),
                Guest.timeout(Duration.ofSeconds(10)));
        rnbdClient.sessionAdded(s);
        return s;
    }

    /** Maps {@code export} of the session as device {@code name}. */
    public RemoteBlockDevice map(String name, ClientSession session, String export, AccessMode mode) throws Exception {
        try {
            return rnbdClient.map(name, session.name(), export, mode)
                    .get(Guest.timeout(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception x ? x : e;
        } catch (TimeoutException e) {
            throw new AssertionError("map " + export + " of " + session.name() + ": no answer", e);
        }
    }

    @Override
    public void close() throws Exception {
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
        for (DisniDevice d : devices) {
            try {
                d.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        devices.clear();
        if (first != null) {
            throw first;
        }
    }
}

package io.rnbd.rxe.interop;

import io.rnbd.rdma.core.internal.DeviceRegistry;
import io.rnbd.rdma.disni.internal.DisniDevice;
import io.rnbd.rdma.disni.internal.DisniRuntime;
import io.rnbd.rdma.disni.internal.DisniSettings;
import io.rnbd.rdma.disni.internal.SysfsDevice;
import io.rnbd.rdma.disni.internal.SysfsScanner;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.backend.file.internal.FileBackend;
import io.rnbd.rnbd.backend.memory.internal.MemoryBackend;
import io.rnbd.rnbd.client.internal.DevicePublisher;
import io.rnbd.rnbd.client.internal.RnbdClient;
import io.rnbd.rnbd.server.internal.ExportConfig;
import io.rnbd.rnbd.server.internal.RnbdServer;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.client.internal.ClientConfig;
import io.rnbd.rtrs.client.internal.ClientSession;
import io.rnbd.rtrs.client.internal.PathAddress;
import io.rnbd.rtrs.client.internal.RtrsClient;
import io.rnbd.rtrs.server.internal.RtrsServer;
import io.rnbd.rtrs.server.internal.ServerConfig;
import io.rnbd.rtrs.server.internal.SessionLimits;
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
import java.util.function.UnaryOperator;

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
    /** One scanner for the whole run: it reads the GID tables again only when something changed. */
    private static final SysfsScanner SYSFS = new SysfsScanner(Path.of("/sys/class/infiniband"));
    /** 25 s of heartbeat silence on the host, stretched like every wait: emulation stalls are not path failures. */
    private static final int HB_MISSED_MAX = (int) (Guest.timeout(Duration.ofSeconds(25)).toMillis() / HB_INTERVAL_MS);
    /** The RTRS server's queue depth unless a test gives another. */
    public static final int QUEUE_DEPTH = 64;

    private final Deque<AutoCloseable> closers = new ArrayDeque<>();
    private final List<DisniDevice> devices = new ArrayList<>();
    private final DeviceRegistry registry = new DeviceRegistry();
    private final FakeBackend backend = new FakeBackend();
    private final FileBackend fileBackend = new FileBackend(4);
    /** The appliance's own memory backend, as shipped (the tests' "memory" is testkit's fake, whose bytes they read). */
    private final MemoryBackend shippedMemory = new MemoryBackend();
    /** Backends a test adds ({@link #addBackend}), handed to every server {@link #restartServer} makes. */
    private final Map<String, BlockBackend> extraBackends = new java.util.concurrent.ConcurrentHashMap<>();
    private final OpTap received = new OpTap();
    /** Kept across restartServer, as the RTRS server component keeps it across a rebuild. */
    private final SessionLimits sessionLimits = new SessionLimits();
    private final List<ExportConfig> exports = new ArrayList<>();
    private final ScheduledExecutorService rtrsTimer;
    private final ScheduledExecutorService rnbdTimer;
    private final int port;
    private final boolean alwaysInvalidate;
    /** Requests pass {@link #received} on their way to the RNBD server (false: a process of its own, {@link #process}). */
    private final boolean tapped;
    private final RtrsClient rtrsClient;
    private final RnbdClient rnbdClient;
    private volatile RnbdServer rnbdServer;
    private volatile RtrsServer rtrsServer;

    private Appliance(List<String> addresses, int port, boolean alwaysInvalidate, int queueDepth, boolean tapped)
            throws Exception {
        this.port = port;
        this.alwaysInvalidate = alwaysInvalidate;
        this.tapped = tapped;
        try {
            rtrsTimer = executor(2);
            rnbdTimer = executor(1);
            closers.push(fileBackend::close);
            closers.push(shippedMemory::close);
            // the server's pieces are replaced by restartServer: close whichever are current
            closers.push(() -> {
                if (rnbdServer != null) {
                    rnbdServer.close();
                }
            });
            closers.push(() -> {
                if (rtrsServer != null) {
                    rtrsServer.close();
                }
            });
            // the client's sessions close before the registry takes the devices from both sides
            closers.push(registry::close);
            rtrsClient = new RtrsClient(rtrsTimer, System::nanoTime);
            closers.push(rtrsClient::close);
            rnbdClient = new RnbdClient(DevicePublisher.NONE);
            closers.push(rnbdClient::close);
            for (String a : addresses) {
                // the provider's completion.threads and memory.windows (bench/linux-peer sets them)
                DisniDevice d = DisniDevice.open(device(a), new DisniSettings(
                        (int) Guest.timeout(Duration.ofSeconds(5)).toMillis(),
                        Integer.getInteger("rnbd.disni.completion.threads", 1),
                        DisniSettings.MemoryWindows.parse(System.getProperty("rnbd.disni.memory.windows", "auto"))));
                devices.add(d);
                registry.addDevice(d);
            }
            startServer(queueDepth);
            registry.addClient(rtrsClient.devices());
        } catch (Exception | Error e) {
            close();
            throw e;
        }
    }

    /** A fresh RNBD server (the exports made so far) on a fresh RTRS server, handed every device. */
    private void startServer(int queueDepth) {
        RnbdServer rnbd = new RnbdServer(rnbdTimer);
        rnbd.backendAdded("memory", backend);
        rnbd.backendAdded("file", fileBackend);
        rnbd.backendAdded(SHIPPED_MEMORY, shippedMemory);
        extraBackends.forEach(rnbd::backendAdded);
        exports.forEach(rnbd::addExport);
        received.upper = rnbd;
        RtrsServerOps upper = tapped ? received : rnbd;
        // rnbd.chunk.size: the bench's knob (BENCH_CHUNK), e.g. Linux's 128 KiB against the appliance's 256 KiB
        int chunkSize = Integer.getInteger("rnbd.chunk.size", ServerConfig.DEFAULT_CHUNK_SIZE);
        RtrsServer rtrs = new RtrsServer(new ServerConfig(port, chunkSize, queueDepth, alwaysInvalidate,
                HB_INTERVAL_MS, HB_MISSED_MAX), () -> upper, () -> null, rtrsTimer, System::nanoTime, sessionLimits);
        rnbdServer = rnbd;
        rtrsServer = rtrs;
        registry.addClient(rtrs);
    }

    /**
     * What a {@code bundle:restart} of the appliance's RTRS and RNBD server bundles does, in
     * plain Java: the RTRS server is taken from the devices (every path closed, as a stopping
     * bundle closes them), both servers closed, then new ones made with the same exports and
     * the given queue depth and handed the devices again (listening on the same port). The
     * sessions' limits are handed on as the component hands them to its replacement: a session
     * that comes back keeps the queue depth it was created with.
     */
    public void restartServer(int queueDepth) {
        registry.removeClient(rtrsServer);
        rtrsServer.close();
        rnbdServer.close();
        startServer(queueDepth);
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
        return onDisni(addresses, port, alwaysInvalidate, QUEUE_DEPTH);
    }

    /** As {@link #onDisni(List, int, boolean)} with the RTRS server's queue depth (queue.depth) as given. */
    public static Appliance onDisni(List<String> addresses, int port, boolean alwaysInvalidate, int queueDepth)
            throws Exception {
        requireDisni();
        return new Appliance(addresses, port, alwaysInvalidate, queueDepth, true);
    }

    /**
     * As {@link #onDisni(List, int, boolean, int)}, for a process of its own ({@link
     * ApplianceServerMain}): no {@link OpTap} between the RTRS and RNBD servers, whose counts no
     * test could read from another process, so that bench/linux-peer measures the path as
     * shipped (the tap's map update and wrapper were about 1 % of the completion thread's
     * samples in docs/perf.md's run 32).
     */
    public static Appliance process(List<String> addresses, int port, boolean alwaysInvalidate, int queueDepth)
            throws Exception {
        requireDisni();
        return new Appliance(addresses, port, alwaysInvalidate, queueDepth, false);
    }

    private static void requireDisni() {
        Optional<String> noNative = new DisniRuntime().unavailableReason();
        Guest.require(noNative.isEmpty(), "DiSNI cannot run here: " + noNative.orElse(""));
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
        Optional<SysfsDevice> d = SYSFS.scan().values().stream()
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
        export(new ExportConfig(name, "memory", false, Set.of(), 0,
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

    /**
     * Adds {@code backend} as {@code type} (the RBD backend, for a test with Ceph in the guest);
     * closed with this, after the servers, so that their exports flush into it first.
     */
    public void addBackend(String type, BlockBackend backend) {
        extraBackends.put(type, backend);
        if (backend instanceof AutoCloseable c) {
            closers.addLast(c);
        }
        rnbdServer.backendAdded(type, backend);
    }

    /** The type the shipped memory backend is added under here. */
    static final String SHIPPED_MEMORY = "shipped-memory";

    /** An export {@code name} of {@code size} bytes on the shipped memory backend (off-heap pages, as in the default profile). */
    public void exportShippedMemory(String name, long size) {
        export(new ExportConfig(name, SHIPPED_MEMORY, false, Set.of(), 0, Map.of("size", Long.toString(size))));
    }

    /** An export {@code name} on the file backend: a file or block device at {@code path}, as it is. */
    public void exportFile(String name, Path path) {
        export(new ExportConfig(name, "file", false, Set.of(), 0, Map.of("path", path.toString())));
    }

    /** An export as configured (kept, and made again by {@link #restartServer}). */
    public void export(ExportConfig config) {
        exports.add(config);
        rnbdServer.addExport(config);
    }

    /** The RNBD IO requests the server received, by op and flags, as the client sent them. */
    public OpTap received() {
        return received;
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
        return connect(sessname, destinations, UnaryOperator.identity());
    }

    /** As {@link #connect(String, List)}, the session's settings changed by {@code tune} first. */
    public ClientSession connect(String sessname, List<InetSocketAddress> destinations,
                                 UnaryOperator<ClientConfig> tune) throws Exception {
        List<PathAddress> paths = new ArrayList<>();
        for (InetSocketAddress d : destinations) {
            paths.add(new PathAddress(d.getAddress(), d.getAddress(), d.getPort()));
        }
        ClientSession s = rtrsClient.open(tune.apply(ClientConfig.of(sessname, paths)
                .withTimings(500, 0, 0, HB_INTERVAL_MS, HB_MISSED_MAX).withCons(2)));
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

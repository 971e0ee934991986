package io.rnbd.rdma.soft.internal;

import io.rnbd.common.AdaptivePoll;
import io.rnbd.common.SpareCpu;

import io.rnbd.rdma.api.CmEventHandler;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.CmPrivateData;
import io.rnbd.rdma.api.ConnectRequestHandler;
import io.rnbd.rdma.api.DeviceAttributes;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.LinkState;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import java.util.function.LongFunction;

/**
 * A software RDMA device over TCP (like siw): IO threads, listeners and connections
 * bound to one local IP address, its memory regions ({@link SoftMemTable}) and its
 * passive connections in the handshake ({@link SoftHandshakes}).
 *
 * <p>Every callback (completions, CM events, connect requests) runs on the device's IO
 * thread and must not block. Usable without OSGi: {@code new SoftDevice("soft0", addr)},
 * then {@link #close()}.
 */
public final class SoftDevice implements RdmaDevice, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SoftDevice.class);
    public static final String PROVIDER = "soft";
    public static final int MAX_IO_THREADS = 16;
    public static final int MAX_POLL_USEC = 1000;
    /**
     * The default {@code poll.usec}: the largest window an IO thread's adaptive busy poll may open
     * ({@link AdaptivePoll}). 50 us covers a depth-1 round trip on a 2-vCPU VM (docs/perf.md).
     */
    public static final int DEFAULT_POLL_USEC = 50;
    static final DeviceAttributes ATTRIBUTES = new DeviceAttributes(1L << 30, 16384, 32, 65536, 1 << 20);
    private static final long CONNECT_TIMEOUT_NANOS = 30_000_000_000L;

    private final String name;
    private final InetAddress address;
    private final String nodeId;
    /** IO threads: [0] also runs the listeners; queue pairs are placed round-robin. */
    private final SoftReactor[] reactors;
    private final AtomicInteger nextReactor = new AtomicInteger();
    private final Set<SoftQp> qps = ConcurrentHashMap.newKeySet();
    private final Set<SoftListener> listeners = ConcurrentHashMap.newKeySet();
    private final SoftMemTable mem = new SoftMemTable();
    private final SoftLoopback loopback;
    private volatile boolean closed;
    private volatile boolean invalidateAtOnce;
    /** rkeys killed through a posted invalidation, and with a call (invalidateNow). */
    final LongAdder invalidationsPosted = new LongAdder();
    final LongAdder invalidationsAtOnce = new LongAdder();
    private final Handshake handshake;
    private final SoftHandshakes handshakes;
    private final LongSupplier nanos;

    /**
     * Opens the device on {@code address}, which must be assignable on this host.
     *
     * @throws RdmaException EINVAL for a bad name, EADDRNOTAVAIL if the address is not local
     */
    public SoftDevice(String name, InetAddress address) throws RdmaException {
        this(name, address, 1);
    }

    /**
     * Opens the device with {@code ioThreads} IO threads (1-{@value #MAX_IO_THREADS}). Each
     * queue pair lives on one of them, so the connections of a path run in parallel, like
     * siw's per-CPU transmit threads; completions of different QPs may then be concurrent.
     *
     * @throws RdmaException EINVAL for a bad name or thread count, EADDRNOTAVAIL if the
     *                       address is not local
     */
    public SoftDevice(String name, InetAddress address, int ioThreads) throws RdmaException {
        this(name, address, ioThreads, DEFAULT_POLL_USEC);
    }

    /**
     * Opens the device with {@code ioThreads} IO threads that each may poll for up to
     * {@code pollUsec} microseconds (0-{@value #MAX_POLL_USEC}; 0: never) before they sleep:
     * the window adapts to the traffic and opens only while work keeps coming back soon and a CPU
     * is spare, so an idle device never polls (see {@code SoftReactor.idle}, {@link AdaptivePoll}).
     *
     * @throws RdmaException EINVAL for a bad name, thread count or poll time, EADDRNOTAVAIL
     *                       if the address is not local
     */
    public SoftDevice(String name, InetAddress address, int ioThreads, int pollUsec) throws RdmaException {
        this(name, address, ioThreads, pollUsec, Handshake.DEFAULT);
    }

    /**
     * As above, with how long an accepted connection may take to send its HELLO and how many
     * connections from one source address may be in the handshake at once.
     */
    public SoftDevice(String name, InetAddress address, int ioThreads, int pollUsec, Handshake handshake)
            throws RdmaException {
        this(name, address, ioThreads, pollUsec, SoftDevice::adaptivePoll, handshake, System::nanoTime);
    }

    /** As above, with each IO thread's busy poll made by {@code polls} from the poll time in nanoseconds. */
    SoftDevice(String name, InetAddress address, int ioThreads, int pollUsec, LongFunction<AdaptivePoll> polls)
            throws RdmaException {
        this(name, address, ioThreads, pollUsec, polls, Handshake.DEFAULT, System::nanoTime);
    }

    /** An IO thread's busy poll as shipped: adaptive, up to {@code maxNanos}, while a CPU is spare. */
    static AdaptivePoll adaptivePoll(long maxNanos) {
        return new AdaptivePoll(maxNanos, maxNanos > 0 ? SpareCpu.system() : null, System::nanoTime);
    }

    /**
     * The passive side's handshake limits: an accepted TCP connection must deliver its HELLO
     * within {@code timeoutMs} (else it is closed), and at most {@code maxPerSource}
     * connections from one source address may be between TCP accept and the connect
     * request's answer (more are closed at once, logged). An RTRS client opens one
     * connection per CPU plus one per path at once, so the default leaves room for a
     * 62-CPU host connecting a path, and far less than the memory a flood would take.
     */
    public record Handshake(long timeoutMs, int maxPerSource) {
        public static final long DEFAULT_TIMEOUT_MS = 10_000;
        public static final int DEFAULT_MAX_PER_SOURCE = 64;
        public static final Handshake DEFAULT = new Handshake(DEFAULT_TIMEOUT_MS, DEFAULT_MAX_PER_SOURCE);

        public Handshake {
            if (timeoutMs < 100 || timeoutMs > 600_000) {
                throw new IllegalArgumentException("handshake timeout must be 100-600000 ms: " + timeoutMs);
            }
            if (maxPerSource < 1) {
                throw new IllegalArgumentException("half-open connections per source must be at least 1: "
                        + maxPerSource);
            }
        }
    }

    /** As above, on the clock {@code nanos} (tests: fake time for the handshake deadlines). */
    SoftDevice(String name, InetAddress address, int ioThreads, int pollUsec, LongFunction<AdaptivePoll> polls,
               Handshake handshake, LongSupplier nanos) throws RdmaException {
        this.handshake = handshake;
        this.nanos = nanos;
        checkName(name);
        if (ioThreads < 1 || ioThreads > MAX_IO_THREADS) {
            throw new RdmaException(Errno.EINVAL, "io threads must be 1-" + MAX_IO_THREADS + ": " + ioThreads);
        }
        if (pollUsec < 0 || pollUsec > MAX_POLL_USEC) {
            throw new RdmaException(Errno.EINVAL, "poll time must be 0-" + MAX_POLL_USEC + " us: " + pollUsec);
        }
        checkAddress(address);
        this.name = name;
        this.address = address;
        this.nodeId = guid(name, address);
        this.handshakes = new SoftHandshakes(name, handshake);
        this.loopback = new SoftLoopback(name, null);
        this.reactors = new SoftReactor[ioThreads];
        try {
            for (int i = 0; i < ioThreads; i++) {
                reactors[i] = new SoftReactor(i == 0 ? name : name + "-" + i,
                        polls.apply(TimeUnit.MICROSECONDS.toNanos(pollUsec)),
                        this::tick, this::teardown);
            }
        } catch (IOException e) {
            for (SoftReactor r : reactors) {
                if (r != null) {
                    r.closeUnstarted();
                }
            }
            throw new RdmaException(Errno.ENOMEM, "cannot open selector", e);
        }
        for (SoftReactor r : reactors) {
            r.start();
        }
        LOG.info("soft RDMA device {} up on {}", name, address.getHostAddress());
    }

    /**
     * Parse a device address: a literal IPv4 or IPv6 address only (never a host name, so
     * configuration cannot trigger DNS lookups).
     *
     * @throws RdmaException EINVAL when {@code text} is not a literal unicast address
     */
    public static InetAddress parseAddress(String text) throws RdmaException {
        String t = text == null ? "" : text.trim();
        boolean v4 = t.matches("\\d{1,3}(\\.\\d{1,3}){3}");
        boolean v6 = t.contains(":") && t.matches("[0-9A-Fa-f:.]+");
        if (!v4 && !v6) {
            throw new RdmaException(Errno.EINVAL, "not an IP address: '" + t + "'");
        }
        if (v4) {
            for (String part : t.split("\\.")) {
                if (Integer.parseInt(part) > 255) {
                    throw new RdmaException(Errno.EINVAL, "not an IP address: '" + t + "'");
                }
            }
        }
        try {
            return InetAddress.getByName(t);
        } catch (IOException e) {
            throw new RdmaException(Errno.EINVAL, "not an IP address: '" + t + "'", e);
        }
    }

    /** EINVAL unless {@code name} is 1-64 of {@code [A-Za-z0-9_.-]}. */
    public static void checkName(String name) throws RdmaException {
        if (name == null || !name.matches("[A-Za-z0-9_.-]{1,64}")) {
            throw new RdmaException(Errno.EINVAL, "device name must be 1-64 of [A-Za-z0-9_.-]: '" + name + "'");
        }
    }

    /** EINVAL unless unicast, EADDRNOTAVAIL unless assignable on this host. */
    public static void checkAddress(InetAddress address) throws RdmaException {
        if (address == null || address.isAnyLocalAddress() || address.isMulticastAddress()) {
            throw new RdmaException(Errno.EINVAL, "device address must be a unicast IP address: " + address);
        }
        checkLocal(address);
    }

    private static void checkLocal(InetAddress address) throws RdmaException {
        try (ServerSocketChannel probe = ServerSocketChannel.open()) {
            probe.bind(new InetSocketAddress(address, 0));
        } catch (IOException e) {
            throw new RdmaException(Errno.EADDRNOTAVAIL, "address " + address.getHostAddress()
                    + " is not assignable on this host", e);
        }
    }

    private static String guid(String name, InetAddress address) {
        long h = 1125899906842597L;
        for (char c : (name + "@" + address.getHostAddress()).toCharArray()) {
            h = 31 * h + c;
        }
        return String.format("%04x:%04x:%04x:%04x", (h >>> 48) & 0xffff, (h >>> 32) & 0xffff,
                (h >>> 16) & 0xffff, h & 0xffff);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String provider() {
        return PROVIDER;
    }

    @Override
    public String nodeId() {
        return nodeId;
    }

    @Override
    public LinkState linkState() {
        return closed ? LinkState.DOWN : LinkState.ACTIVE;
    }

    @Override
    public DeviceAttributes attributes() {
        return ATTRIBUTES;
    }

    @Override
    public List<InetAddress> addresses() {
        return List.of(address);
    }

    public InetAddress address() {
        return address;
    }

    /**
     * Whether this device's queue pairs kill an rkey when asked to at once
     * ({@link io.rnbd.rdma.api.QueuePair#invalidateNow}), as DiSNI does on an adapter without
     * memory windows, or only through a posted invalidation, as on one with windows (the
     * default): the layers above are tested against both kinds of adapter.
     */
    public void invalidateAtOnce(boolean atOnce) {
        invalidateAtOnce = atOnce;
    }

    boolean invalidatesAtOnce() {
        return invalidateAtOnce;
    }

    @Override
    public ProtectionDomain allocPd() throws RdmaException {
        checkOpen();
        return new SoftPd(this);
    }

    @Override
    public CmListener listen(InetSocketAddress at, ConnectRequestHandler handler) throws RdmaException {
        checkOpen();
        if (handler == null || at == null) {
            throw new RdmaException(Errno.EINVAL, "address and handler required");
        }
        if (!at.getAddress().isAnyLocalAddress() && !at.getAddress().equals(address)) {
            throw new RdmaException(Errno.EADDRNOTAVAIL, at.getAddress().getHostAddress()
                    + " is not an address of device " + name);
        }
        ServerSocketChannel server = null;
        InetSocketAddress local;
        try {
            server = ServerSocketChannel.open();
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(at, 1024);
            server.configureBlocking(false);
            local = (InetSocketAddress) server.getLocalAddress();
        } catch (BindException e) {
            closeQuietly(server);
            throw new RdmaException(Errno.EADDRINUSE, "cannot listen on " + at, e);
        } catch (IOException e) {
            closeQuietly(server);
            throw new RdmaException(Errno.EIO, "cannot listen on " + at, e);
        }
        SoftListener listener = new SoftListener(this, server, local, loopback.bind(local.getPort()), handler);
        listeners.add(listener);
        reactor().executeAndWait(listener::register);
        if (closed) {
            listener.close();
            throw new RdmaException(Errno.ENODEV, "device " + name + " is gone");
        }
        return listener;
    }

    @Override
    public QueuePair connect(InetSocketAddress destination, QpInit init, byte[] privateData, CmEventHandler events)
            throws RdmaException {
        checkOpen();
        if (destination == null || events == null) {
            throw new RdmaException(Errno.EINVAL, "destination and event handler required");
        }
        byte[] pdata = CmPrivateData.check(privateData, CmPrivateData.CONNECT_MAX, "connect");
        if (destination.isUnresolved()) {
            throw new RdmaException(Errno.EHOSTUNREACH, "cannot resolve " + destination.getHostString());
        }
        checkInit(init);
        UnixDomainSocketAddress toSelf = loopback.route(destination, address);
        SocketChannel ch = null;
        try {
            if (toSelf != null) {
                ch = SocketChannel.open(StandardProtocolFamily.UNIX);
                ch.configureBlocking(false);
            } else {
                ch = SocketChannel.open();
                ch.configureBlocking(false);
                tune(ch);
                ch.bind(new InetSocketAddress(address, 0));
            }
        } catch (IOException e) {
            closeQuietly(ch);
            throw new RdmaException(Errno.EADDRNOTAVAIL, "cannot bind to " + address.getHostAddress(), e);
        }
        SoftQp qp = SoftQp.active(this, nextReactor(), ch, init, events, destination,
                nanos() + CONNECT_TIMEOUT_NANOS);
        qps.add(qp);
        SocketAddress via = toSelf != null ? toSelf : destination;
        qp.reactor().execute(() -> qp.cm.startConnect(via, pdata));
        return qp;
    }

    void checkInit(QpInit init) throws RdmaException {
        if (init == null) {
            throw new RdmaException(Errno.EINVAL, "qp init required");
        }
        if (!(init.pd() instanceof SoftPd) || ((SoftPd) init.pd()).softDevice() != this) {
            throw new RdmaException(Errno.EINVAL, "protection domain belongs to another device");
        }
        if (init.maxSendWr() > ATTRIBUTES.maxQpWr() || init.maxRecvWr() > ATTRIBUTES.maxQpWr()
                || init.maxSge() > ATTRIBUTES.maxSge()) {
            throw new RdmaException(Errno.EINVAL, "queue pair exceeds device limits " + ATTRIBUTES);
        }
        if (qps.size() >= ATTRIBUTES.maxQp()) {
            throw new RdmaException(Errno.ENOMEM, "too many queue pairs");
        }
    }

    void checkOpen() throws RdmaException {
        if (closed) {
            throw new RdmaException(Errno.ENODEV, "device " + name + " is gone");
        }
    }

    /** The listeners' IO thread. */
    SoftReactor reactor() {
        return reactors[0];
    }

    /** The IO thread for a new queue pair. */
    SoftReactor nextReactor() {
        return reactors[Math.floorMod(nextReactor.getAndIncrement(), reactors.length)];
    }

    int ioThreads() {
        return reactors.length;
    }

    /**
     * {@code polls}: busy polls the IO threads began; {@code poll_hits}: those that found work
     * before their window ended; {@code polls_skipped}: polls the window called for but not begun
     * because no CPU was spare or the process already polled on as many threads as it may (all 0
     * with {@code poll.usec} 0, and while the device is idle); {@code loopback_connects}:
     * connects it sent to its own listeners over a Unix socket instead of TCP, a refused one
     * included ({@link SoftLoopback}); {@code invalidations_posted} and {@code
     * invalidations_at_once}: rkeys killed through a posted invalidation and with a call
     * ({@link #invalidateAtOnce}).
     */
    @Override
    public Map<String, Long> counters() {
        long[] c = pollCounts();
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("polls", c[0]);
        m.put("poll_hits", c[2]);
        m.put("polls_skipped", c[1]);
        m.put("handshakes_refused", handshakes.refusedCount());
        m.put("handshakes_timed_out", handshakes.timedOutCount());
        m.put("loopback_connects", loopback.connects());
        m.put("invalidations_posted", invalidationsPosted.sum());
        m.put("invalidations_at_once", invalidationsAtOnce.sum());
        return m;
    }

    /** Busy polls begun by the IO threads, not begun because no CPU was spare, and that found work. */
    long[] pollCounts() {
        long[] c = new long[3];
        for (SoftReactor r : reactors) {
            c[0] += r.poll().polls();
            c[1] += r.poll().skipped();
            c[2] += r.poll().hits();
        }
        return c;
    }

    /** The IO threads' busy-poll windows now, in nanoseconds (0: sleeps at once). */
    long[] pollWindows() {
        long[] w = new long[reactors.length];
        for (int i = 0; i < w.length; i++) {
            w[i] = reactors[i].poll().windowNanos();
        }
        return w;
    }

    void adopt(SoftQp qp) {
        qps.add(qp);
    }

    void forget(SoftQp qp) {
        qps.remove(qp);
    }

    void forget(SoftListener listener) {
        listeners.remove(listener);
    }

    /** Its connections to itself (Unix sockets beside its listeners' ports). */
    SoftLoopback loopback() {
        return loopback;
    }

    /** The device's memory regions and their rkey table. */
    SoftMemTable mem() {
        return mem;
    }

    /** This device's clock for every deadline (connect, handshake, linger). */
    long nanos() {
        return nanos.getAsLong();
    }

    Handshake handshake() {
        return handshake;
    }

    /** Passive connections in the handshake, per source. */
    SoftHandshakes handshakes() {
        return handshakes;
    }

    private void tick(SoftReactor on) {
        long now = nanos();
        for (SoftQp qp : qps) {
            if (qp.reactor() == on) {
                qp.cm.checkDeadline(now);
            }
        }
    }

    /** On each IO thread as it stops: the listeners close (first thread), its connections flush. */
    private void teardown(SoftReactor on) {
        if (on == reactors[0]) {
            for (SoftListener l : new ArrayList<>(listeners)) {
                l.closeNow();
            }
        }
        for (SoftQp qp : new ArrayList<>(qps)) {
            if (qp.reactor() == on) {
                qp.deviceRemoved();
            }
        }
    }

    /**
     * Remove the device: listeners close (ports freed), queue pairs go to ERROR with
     * {@code DEVICE_REMOVAL}, outstanding requests flush, the IO thread ends. Unregister
     * the OSGi service before calling this so clients let go first.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // the listeners' thread first: no connection is accepted onto a stopped thread
        for (SoftReactor r : reactors) {
            r.stop();
        }
        loopback.close();
        mem.clear();
        LOG.info("soft RDMA device {} removed", name);
    }

    /**
     * A connection's socket options: no Nagle. Buffer sizes stay with the kernel's autotuning:
     * fixed 4 MiB send/receive buffers changed nothing at 128 KiB (docs/perf.md).
     */
    static void tune(SocketChannel ch) throws IOException {
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
    }

    static void closeQuietly(java.io.Closeable c) {
        if (c != null) {
            try {
                c.close();
            } catch (IOException e) {
                LOG.debug("close", e);
            }
        }
    }

    @Override
    public String toString() {
        return "soft:" + name + "@" + address.getHostAddress();
    }
}

package io.rnbd.rtrs.server;

import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.ConnectRequest;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.IbClient;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.api.RtrsServerSessionInfo;
import io.rnbd.rtrs.proto.ConReq;
import io.rnbd.rtrs.proto.ConRsp;
import io.rnbd.rtrs.proto.ProtoException;
import io.rnbd.rtrs.proto.Rtrs;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The RTRS server, an {@link IbClient}: it listens on a device's addresses only between
 * {@code add(device)} and {@code remove(device)}, and lets go of everything on that
 * device in {@code remove}. Plain Java: build it, hand it devices, close it.
 *
 * <pre>
 *   RtrsServer srv = new RtrsServer(config, () -&gt; ops, () -&gt; null, scheduler, System::nanoTime);
 *   srv.add(device);            // what the device registry (rdma-core) does for IB clients
 *   ...
 *   srv.close();
 * </pre>
 */
public final class RtrsServer implements IbClient, RtrsServerAdmin, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RtrsServer.class);
    private static final String NONE = "none";

    private final ServerConfig cfg;
    /** The limits of new sessions ({@link #newSessionLimits}); those of known ones are in {@link #limits}. */
    private volatile SessionLimits.Limits current;
    private final SessionLimits limits;
    private final Supplier<RtrsServerOps> ops;
    private final Supplier<Authenticator> auth;
    private final ScheduledExecutorService timer;
    private final LongSupplier nanos;
    private final Map<RdmaDevice, DeviceContext> devices = new ConcurrentHashMap<>();
    private final Map<UUID, ServerSession> sessions = new ConcurrentHashMap<>();
    /** Requests that arrived while there was no upper layer; guarded by itself. */
    private final List<ServerRequest> parked = new ArrayList<>();
    /**
     * Closes handed to the timer and not yet told: {@link #close()} tells them itself, since
     * the bundle's timer is shut down right after it and would drop them (CI's SwapIT: an idle
     * session's paths left as the devices went, its close was queued and dropped, and the
     * RNBD server kept its opens; every device's re-OPEN was refused EBUSY forever).
     */
    private final Set<ServerSession> closesUntold = ConcurrentHashMap.newKeySet();
    private final Map<InetAddress, Integer> connecting = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicLong halfOpenRefused = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong handshakesTimedOut = new java.util.concurrent.atomic.AtomicLong();

    /**
     * @param ops   the upper layer now (may change between calls; null = none, requests fail with ENODEV)
     * @param auth  the authenticator now (null = no authentication)
     * @param timer runs heartbeats; owned by the caller
     */
    public RtrsServer(ServerConfig cfg, Supplier<RtrsServerOps> ops, Supplier<Authenticator> auth,
                      ScheduledExecutorService timer, LongSupplier nanos) {
        this(cfg, ops, auth, timer, nanos, new SessionLimits());
    }

    /**
     * @param limits the queue depth and chunk size of the sessions seen so far, handed on from
     *               a server this one replaces: a session coming back gets its own again
     */
    public RtrsServer(ServerConfig cfg, Supplier<RtrsServerOps> ops, Supplier<Authenticator> auth,
                      ScheduledExecutorService timer, LongSupplier nanos, SessionLimits limits) {
        this.current = new SessionLimits.Limits(cfg.queueDepth(), cfg.chunkSize());
        this.limits = limits;
        this.cfg = cfg;
        this.ops = ops;
        this.auth = auth;
        this.timer = timer;
        this.nanos = nanos;
    }

    @Override
    public String clientName() {
        return "rtrs-server";
    }

    public ServerConfig config() {
        return cfg;
    }

    @Override
    public void add(RdmaDevice device) {
        ProtectionDomain pd;
        try {
            pd = device.allocPd();
        } catch (RdmaException e) {
            LOG.error("rtrs-server cannot use device {}: {}", device.name(), e.getMessage());
            return;
        }
        DeviceContext ctx = new DeviceContext(device, pd);
        devices.put(device, ctx);
        for (InetAddress a : device.addresses()) {
            try {
                CmListener l = device.listen(new InetSocketAddress(a, cfg.port()), req -> onConnectRequest(ctx, req));
                ctx.listeners.add(l);
                LOG.info("rtrs-server listening on {} ({})", l.localAddress(), device.name());
            } catch (RdmaException e) {
                LOG.error("rtrs-server cannot listen on {}:{} of {}: {}", a.getHostAddress(), cfg.port(),
                        device.name(), e.getMessage());
            }
        }
    }

    @Override
    public void remove(RdmaDevice device) {
        DeviceContext ctx = devices.remove(device);
        if (ctx == null) {
            return;
        }
        ctx.listeners.forEach(CmListener::close);
        for (ServerSession s : sessions.values()) {
            List<ServerPath> onDev = new ArrayList<>();
            synchronized (s) {
                for (ServerPath p : s.paths.values()) {
                    if (p.dev == ctx) {
                        onDev.add(p);
                    }
                }
            }
            onDev.forEach(ServerPath::releaseResources);
        }
        for (ServerCon c : List.copyOf(ctx.cons)) {
            c.close();
        }
        ctx.pd.close();
        LOG.info("rtrs-server released device {}", device.name());
    }

    /** Where the server listens on {@code device} (with the real port when 0 was configured). */
    public List<InetSocketAddress> listenAddresses(RdmaDevice device) {
        DeviceContext ctx = devices.get(device);
        List<InetSocketAddress> out = new ArrayList<>();
        if (ctx != null) {
            ctx.listeners.forEach(l -> out.add(l.localAddress()));
        }
        return out;
    }

    /**
     * A connect request (rtrs_rdma_connect): its private data is the CON_REQ; the answer is
     * an accept carrying the CON_RSP or a reject carrying a CON_RSP with the errno. The
     * session is found by the CON_REQ's session uuid (paths_uuid) and created only when the
     * client says it may be (first_conn); the path by its path uuid (sess_uuid).
     */
    private void onConnectRequest(DeviceContext ctx, ConnectRequest req) {
        ConReq cr;
        try {
            cr = ConReq.decode(req.privateData());
        } catch (ProtoException e) {
            LOG.warn("refusing connection from {}: {}", req.remoteAddress(), e.getMessage());
            reject(req, e.errno(), false);
            return;
        }
        Authenticator a = auth.get();
        if (!cr.extensions() && a != null && !NONE.equals(a.method())) {
            // a Linux client cannot authenticate: refusing it is the only safe answer
            LOG.warn("refusing connection from {}: the client does not speak this appliance's RTRS extensions "
                    + "(a Linux rnbd-client?) and authentication ({}) is required", req.remoteAddress(), a.method());
            reject(req, Errno.EACCES, true);
            return;
        }
        ServerSession s;
        if (cr.firstConn()) {
            s = sessions.computeIfAbsent(cr.sessionUuid(), this::newSession);
        } else {
            s = sessions.get(cr.sessionUuid());
            if (s == null) {
                LOG.info("refusing connection {} of path {} from {}: unknown session and not its first connection",
                        cr.cid(), cr.pathUuid(), req.remoteAddress());
                reject(req, Errno.ENXIO, false);
                return;
            }
        }
        ServerCon con = null;
        int errno;
        boolean dnr = false;
        synchronized (s) {
            ServerPath p = s.paths.get(cr.pathUuid());
            try {
                if (s.closed()) {
                    // its last path left between the lookup and here: the client tries again
                    // and meets a new session
                    errno = Errno.ECONNRESET;
                } else if (p != null && p.reconCnt != cr.reconCnt()) {
                    // the client reconnects while we still tear the old instance down
                    p.failLocked(Errno.ECONNRESET, "client reconnected");
                    errno = Errno.EBUSY;
                } else if (p != null && (p.cidNum() != cr.cidNum())) {
                    errno = Errno.ECONNRESET;
                } else if (p == null && s.paths.size() >= Rtrs.MAX_PATHS) {
                    errno = Errno.ECONNRESET;
                    dnr = true;
                } else if (p == null && s.hasPathBetween(req.localAddress(), req.remoteAddress())) {
                    // Linux's __is_path_w_addr_exists: one path per pair of addresses
                    errno = Errno.EEXIST;
                } else if (p == null && connectingFrom(req.remoteAddress().getAddress()) >= cfg.maxHalfOpenPerSource()) {
                    // many paths of one source in their handshake at once: a flood, or a host
                    // reconnecting everything at once, which retries (EAGAIN is not final)
                    errno = Errno.EAGAIN;
                    long r = halfOpenRefused.incrementAndGet();
                    if ((r & (r - 1)) == 0) {
                        LOG.warn("refusing a new path from {}: {} paths from there are already in their handshake "
                                + "(max.half.open.per.source; {} refused so far)", req.remoteAddress().getAddress()
                                .getHostAddress(), cfg.maxHalfOpenPerSource(), r);
                    }
                } else {
                    if (p == null) {
                        p = new ServerPath(s, cr.pathUuid(), cr.reconCnt(), cr.cidNum(), cr.extensions(),
                                req.localAddress().getAddress(), req.remoteAddress().getAddress(), ctx, cfg);
                        s.paths.put(cr.pathUuid(), p);
                        s.extensions |= cr.extensions();
                        handshakeStarted(p.remoteAddr);
                    }
                    con = p.attach(cr.cid());
                    errno = con == null ? Errno.ECONNRESET : 0;
                }
            } catch (RdmaException e) {
                errno = e.errno();
            }
        }
        s.runClosers();
        if (errno != 0) {
            LOG.info("refusing connection {} of path {} from {}: {}", cr.cid(), cr.pathUuid(), req.remoteAddress(),
                    Errno.name(errno));
            reject(req, errno, dnr);
            forgetIfEmpty(s);
            return;
        }
        int flags = cfg.alwaysInvalidate() ? ConRsp.NEW_RKEY_F : 0;
        if (cr.extensions()) {
            flags |= ConRsp.EXT_F | (a != null ? ConRsp.AUTH_F : 0);
        }
        ConRsp rsp = ConRsp.accept(s.queueDepth(), s.maxIoSize(), Rtrs.MAX_HDR_SIZE, flags);
        int max = ctx.device.attributes().maxQpWr();
        // per request: read data, invalidation, answer; plus heartbeats (rtrs-srv create_con)
        int sendWr = Math.min(max, 3 * s.queueDepth() + 64);
        int recvWr = Math.min(max, s.queueDepth() + ServerPath.SERVICE_RECVS + ServerPath.SPARE_RECVS);
        ServerCon c = con;
        try {
            req.accept(new QpInit(ctx.pd, sendWr, recvWr, 1, c), c, rsp.toBytes(), c::setUp);
        } catch (RdmaException e) {
            LOG.warn("cannot accept {}: {}", req.remoteAddress(), e.getMessage());
            c.path.fail(e.errno(), "accept failed");
        }
    }

    /** Paths from {@code source} still in their handshake (CONNECTING), over every session. */
    private int connectingFrom(InetAddress source) {
        return connecting.getOrDefault(source, 0);
    }

    void handshakeStarted(InetAddress source) {
        connecting.merge(source, 1, Integer::sum);
    }

    void handshakeEnded(InetAddress source) {
        connecting.computeIfPresent(source, (k, n) -> n <= 1 ? null : n - 1);
    }

    void handshakeTimedOut() {
        handshakesTimedOut.incrementAndGet();
    }

    /** Paths refused because their source had too many in the handshake, and paths closed at the deadline. */
    public long[] handshakeCounters() {
        return new long[] {halfOpenRefused.get(), handshakesTimedOut.get()};
    }

    private static void reject(ConnectRequest req, int errno, boolean doNotRetry) {
        req.reject(errno, ConRsp.refuse(errno, doNotRetry).toBytes());
    }

    /** A session of {@code uuid}: with the limits it had when this server (or the one before) saw it. */
    private ServerSession newSession(UUID uuid) {
        SessionLimits.Limits now = current;
        SessionLimits.Limits l = limits.of(uuid, now);
        if (!l.equals(now)) {
            LOG.info("session {} comes back: it keeps queue depth {} and chunk size {} (new sessions get {} and {}); "
                    + "Linux's client refuses a changed queue depth for good", uuid, l.queueDepth(), l.chunkSize(),
                    now.queueDepth(), now.chunkSize());
        }
        return new ServerSession(this, uuid, l.queueDepth(), l.chunkSize());
    }

    /**
     * queue.depth and chunk.size for sessions this server has not seen; those it has keep
     * theirs, connected or coming back ({@link SessionLimits}).
     *
     * @throws IllegalArgumentException for limits {@link ServerConfig} refuses
     */
    public void newSessionLimits(int queueDepth, int chunkSize) {
        new ServerConfig(cfg.port(), chunkSize, queueDepth, cfg.alwaysInvalidate(), cfg.hbIntervalMs(),
                cfg.hbMissedMax(), cfg.upperWaitMs(), cfg.handshakeTimeoutMs(), cfg.maxHalfOpenPerSource());
        SessionLimits.Limits l = new SessionLimits.Limits(queueDepth, chunkSize);
        if (!l.equals(current)) {
            LOG.info("new sessions get queue depth {} and chunk size {}; the {} sessions seen keep theirs", queueDepth,
                    chunkSize, limits.size());
        }
        current = l;
    }

    private void forgetIfEmpty(ServerSession s) {
        synchronized (s) {
            if (s.paths.isEmpty()) {
                sessions.remove(s.uuid(), s);
            }
        }
    }

    /** Linux's exist_pathname: another session already has a path named {@code name}. */
    boolean nameTakenElsewhere(String name, ServerSession mine) {
        for (ServerSession s : sessions.values()) {
            if (s != mine && s.name().equals(name)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Hand a request to the upper layer. While there is none (its bundle restarts) the
     * request waits up to {@code upper.wait.ms} instead of failing: the client sees a stall,
     * and the new upper layer, which knows none of the old one's device ids, answers ENXIO,
     * which makes the RNBD client open again and resend.
     */
    void dispatch(ServerRequest r) {
        RtrsServerOps o = ops.get();
        if (o == null) {
            park(r);
            return;
        }
        deliver(o, r);
    }

    private void park(ServerRequest r) {
        if (cfg.upperWaitMs() == 0) {
            r.complete(Errno.ENODEV);
            return;
        }
        boolean stopped = false;
        // parked and its deadline armed in one step: whoever sees it waiting (a test moving
        // fake time, waitingForUpperLayer) sees a deadline that will fire; the expiry itself
        // takes this lock, so it cannot run before the request is in the list
        synchronized (parked) {
            parked.add(r);
            try {
                timer.schedule(() -> {
                    boolean expired;
                    synchronized (parked) {
                        expired = parked.remove(r);
                    }
                    if (expired) {
                        r.complete(Errno.ENODEV);
                    }
                }, cfg.upperWaitMs(), TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                parked.remove(r);
                stopped = true;
            }
        }
        if (stopped) {
            r.complete(Errno.ENODEV);
            return;
        }
        // the upper layer may have come while we parked
        upperLayerChanged();
    }

    /** Requests waiting for an upper layer now. */
    public int waitingForUpperLayer() {
        synchronized (parked) {
            return parked.size();
        }
    }

    /** The upper layer came, went or was replaced: what waited for one goes to it now. */
    public void upperLayerChanged() {
        RtrsServerOps o = ops.get();
        if (o == null) {
            return;
        }
        List<ServerRequest> go;
        synchronized (parked) {
            go = new ArrayList<>(parked);
            parked.clear();
        }
        if (!go.isEmpty()) {
            LOG.info("rtrs-server: {} requests that waited for an upper layer go to it", go.size());
        }
        for (ServerRequest r : go) {
            deliver(o, r);
        }
    }

    private void deliver(RtrsServerOps o, ServerRequest r) {
        try {
            o.onRequest(r);
        } catch (RuntimeException e) {
            LOG.warn("upper layer failed a request", e);
            try {
                r.complete(Errno.EIO);
            } catch (IllegalStateException alreadyCompleted) {
                // it had answered before throwing
            }
        }
    }

    void pathConnected(ServerPath p) {
        ServerSession s = p.session;
        if (!s.announced) {
            s.announced = true;
            RtrsServerOps o = ops.get();
            if (o != null) {
                timer.execute(() -> o.onSessionConnected(s));
            }
        }
    }

    /** Under the session lock: a closed, drained path leaves; the last one takes the session along. */
    void pathGone(ServerPath p) {
        ServerSession s = p.session;
        s.paths.remove(p.uuid, p);
        if (s.paths.isEmpty()) {
            sessions.remove(s.uuid(), s);
            s.markClosed();
            announceClosed(s, true);
        }
    }

    /**
     * Tell the upper layer, once, that {@code s} is gone, so that it releases what it holds for
     * it (RNBD: the session's opens, among them the export's one writer). A close it never
     * hears of holds those forever: the client's next session is refused the export (EBUSY).
     * From the timer thread when {@code async} (the caller holds the session's lock), else
     * inline; inline too when the timer has stopped.
     */
    private void announceClosed(ServerSession s, boolean async) {
        if (!s.announced || !s.takeCloseAnnouncement()) {
            return;
        }
        closesUntold.add(s);
        if (async) {
            try {
                timer.execute(() -> tellClosed(s));
                return;
            } catch (RejectedExecutionException stopped) {
                // the server is stopping: tell it here
            }
        }
        tellClosed(s);
    }

    /** Once per session, whoever comes first: the timer's task or {@link #close()}. */
    private void tellClosed(ServerSession s) {
        if (!closesUntold.remove(s)) {
            return;
        }
        RtrsServerOps o = ops.get();
        if (o == null) {
            return;
        }
        try {
            o.onSessionClosed(s);
        } catch (RuntimeException e) {
            LOG.warn("upper layer failed on the close of {}", s, e);
        }
    }

    Authenticator authenticator() {
        return auth.get();
    }

    @Override
    public String authMethod() {
        Authenticator a = auth.get();
        return a == null ? "" : a.method();
    }

    ScheduledExecutorService timer() {
        return timer;
    }

    long nanos() {
        return nanos.getAsLong();
    }

    public Optional<ServerSession> session(String name) {
        return sessions.values().stream().filter(s -> s.name().equals(name)).findFirst();
    }

    @Override
    public List<RtrsServerSessionInfo> sessions() {
        List<RtrsServerSessionInfo> out = new ArrayList<>();
        for (ServerSession s : sessions.values()) {
            out.add(s.info());
        }
        return out;
    }

    @Override
    public boolean closeSession(String name) {
        Optional<ServerSession> s = session(name);
        s.ifPresent(ServerSession::close);
        return s.isPresent();
    }

    /**
     * Let go of every device (as if each were removed), answer every request still waiting for
     * an upper layer (ENODEV), and tell the upper layer that every session it knows of is
     * closed before returning: a path still draining a request the upper layer holds leaves
     * later, when nobody (the timer has stopped with the bundle) would pass its close on.
     */
    @Override
    public void close() {
        for (RdmaDevice d : List.copyOf(devices.keySet())) {
            remove(d);
        }
        List<ServerRequest> waiting;
        synchronized (parked) {
            waiting = new ArrayList<>(parked);
            parked.clear();
        }
        for (ServerRequest r : waiting) {
            try {
                r.complete(Errno.ENODEV);
            } catch (IllegalStateException alreadyCompleted) {
                // answered while we took it
            }
        }
        for (ServerSession s : List.copyOf(sessions.values())) {
            sessions.remove(s.uuid(), s);
            s.markClosed();
            announceClosed(s, false);
        }
        for (ServerSession s : List.copyOf(closesUntold)) {
            tellClosed(s);
        }
    }
}

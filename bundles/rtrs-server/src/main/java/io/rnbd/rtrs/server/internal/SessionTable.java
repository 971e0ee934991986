package io.rnbd.rtrs.server.internal;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.RtrsServerSessionInfo;
import io.rnbd.rtrs.proto.ConReq;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The server's sessions by uuid (paths_uuid) and what the admin sees of them: created by a
 * first_conn connect request with the limits they had before ({@link SessionLimits}), gone
 * with their last path; the paths of each source still in their handshake
 * ({@code max.half.open.per.source}). The {@link Acceptor} reaches it as {@link Sessions};
 * the upper layer hears of sessions through {@link UpperLayer}.
 */
final class SessionTable implements Sessions {
    private static final Logger LOG = LoggerFactory.getLogger(SessionTable.class);

    private final ServerConfig cfg;
    private final SessionLimits limits;
    /** The limits of new sessions ({@link #newSessionLimits}); those of known ones are in {@link #limits}. */
    private volatile SessionLimits.Limits current;
    private final UpperLayer upper;
    private final Supplier<Authenticator> auth;
    private final ScheduledExecutorService timer;
    private final LongSupplier nanos;
    private final Map<UUID, ServerSession> sessions = new ConcurrentHashMap<>();
    private final Map<InetAddress, Integer> connecting = new ConcurrentHashMap<>();
    private final AtomicLong halfOpenRefused = new AtomicLong();
    private final AtomicLong handshakesTimedOut = new AtomicLong();

    SessionTable(ServerConfig cfg, SessionLimits limits, UpperLayer upper, Supplier<Authenticator> auth,
                 ScheduledExecutorService timer, LongSupplier nanos) {
        this.cfg = cfg;
        this.limits = limits;
        this.current = new SessionLimits.Limits(cfg.queueDepth(), cfg.chunkSize());
        this.upper = upper;
        this.auth = auth;
        this.timer = timer;
        this.nanos = nanos;
    }

    // ---- what the sessions share --------------------------------------------------------

    ServerConfig cfg() {
        return cfg;
    }

    UpperLayer upper() {
        return upper;
    }

    Authenticator authenticator() {
        return auth.get();
    }

    ScheduledExecutorService timer() {
        return timer;
    }

    long nanoTime() {
        return nanos.getAsLong();
    }

    // ---- Sessions: the acceptor's door --------------------------------------------------

    /**
     * The session is found by the CON_REQ's session uuid (paths_uuid) and created only when the
     * client says it may be (first_conn); then the session admits the path.
     */
    @Override
    public Admission admit(ConReq cr, DeviceContext dev, InetSocketAddress local, InetSocketAddress remote) {
        ServerSession s;
        if (cr.firstConn()) {
            s = sessions.computeIfAbsent(cr.sessionUuid(), this::newSession);
        } else {
            s = sessions.get(cr.sessionUuid());
            if (s == null) {
                LOG.info("connection {} of path {} from {}: unknown session and not its first connection",
                        cr.cid(), cr.pathUuid(), remote);
                return Admission.refused(Errno.ENXIO, false);
            }
        }
        Admission a = s.admit(cr, dev, local, remote);
        if (a.errno() != 0) {
            forgetIfEmpty(s);
        }
        return a;
    }

    @Override
    public void deviceRemoved(DeviceContext dev) {
        for (ServerSession s : sessions.values()) {
            s.deviceRemoved(dev);
        }
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
        return new ServerSession(this, uuid, l);
    }

    private void forgetIfEmpty(ServerSession s) {
        synchronized (s) {
            if (s.empty()) {
                sessions.remove(s.uuid(), s);
            }
        }
    }

    /** Under the session's lock: its last path left; the session goes with it. */
    void lastPathGone(ServerSession s) {
        sessions.remove(s.uuid(), s);
        s.markClosed();
        upper.sessionClosed(s, true);
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
     * queue.depth and chunk.size for sessions this server has not seen; those it has keep
     * theirs, connected or coming back ({@link SessionLimits}).
     *
     * @throws IllegalArgumentException for limits {@link ServerConfig} refuses
     */
    void newSessionLimits(int queueDepth, int chunkSize) {
        new ServerConfig(cfg.port(), chunkSize, queueDepth, cfg.alwaysInvalidate(), cfg.hbIntervalMs(),
                cfg.hbMissedMax(), cfg.upperWaitMs(), cfg.handshakeTimeoutMs(), cfg.maxHalfOpenPerSource());
        SessionLimits.Limits l = new SessionLimits.Limits(queueDepth, chunkSize);
        if (!l.equals(current)) {
            LOG.info("new sessions get queue depth {} and chunk size {}; the {} sessions seen keep theirs", queueDepth,
                    chunkSize, limits.size());
        }
        current = l;
    }

    // ---- paths in their handshake, per source --------------------------------------------

    /** Under a session's lock, before a new path: whether its source may have one more path in its handshake. */
    boolean mayStartHandshake(InetAddress source) {
        if (connecting.getOrDefault(source, 0) < cfg.maxHalfOpenPerSource()) {
            return true;
        }
        long r = halfOpenRefused.incrementAndGet();
        if ((r & (r - 1)) == 0) {
            LOG.warn("refusing a new path from {}: {} paths from there are already in their handshake "
                    + "(max.half.open.per.source; {} refused so far)", source.getHostAddress(),
                    cfg.maxHalfOpenPerSource(), r);
        }
        return false;
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
    long[] handshakeCounters() {
        return new long[] {halfOpenRefused.get(), handshakesTimedOut.get()};
    }

    // ---- the admin view ------------------------------------------------------------------

    Optional<ServerSession> session(String name) {
        return sessions.values().stream().filter(s -> s.name().equals(name)).findFirst();
    }

    List<RtrsServerSessionInfo> sessions() {
        List<RtrsServerSessionInfo> out = new ArrayList<>();
        for (ServerSession s : sessions.values()) {
            out.add(s.info());
        }
        return out;
    }

    boolean closeSession(String name) {
        Optional<ServerSession> s = session(name);
        s.ifPresent(ServerSession::close);
        return s.isPresent();
    }

    /**
     * The server stops: every session leaves, and the upper layer is told of each close before
     * this returns (a path still draining a request the upper layer holds leaves later, when
     * nobody would pass its close on: the timer stops with the bundle).
     */
    void close() {
        for (ServerSession s : List.copyOf(sessions.values())) {
            sessions.remove(s.uuid(), s);
            s.markClosed();
            upper.sessionClosed(s, false);
        }
    }
}

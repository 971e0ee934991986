package io.rnbd.rtrs.server.internal;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.RtrsServerPathInfo;
import io.rnbd.rtrs.api.RtrsServerRequest;
import io.rnbd.rtrs.api.RtrsServerSession;
import io.rnbd.rtrs.api.RtrsServerSessionInfo;
import io.rnbd.rtrs.core.SessionLock;
import io.rnbd.rtrs.proto.ConReq;
import io.rnbd.rtrs.proto.Rtrs;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ScheduledFuture;

/**
 * A client session on the server: its chunks (one per client permit, shared by all its
 * paths), its paths by UUID, its identity. The session object is the lock for all of them
 * (rtrs-core's {@link SessionLock} on its monitor). Its paths see it only as
 * {@link PathSession}; the upper layer as {@link RtrsServerSession}.
 */
public final class ServerSession implements RtrsServerSession, PathSession {
    private static final Logger LOG = LoggerFactory.getLogger(ServerSession.class);

    private final SessionTable table;
    private final UUID uuid;
    private final SessionLock<Void> lock;
    private final Chunks chunks;
    private final Map<UUID, ServerPath> paths = new LinkedHashMap<>();
    private final ServerStats stats = new ServerStats();
    private volatile String name = "";
    private volatile String hostId = "";
    private volatile boolean hostIdProven;
    private volatile String authMethod = "";
    /** Sticky: a path of this session said it speaks the extensions (ConReq.EXT_F). */
    private volatile boolean extensions;
    /** Under the lock: the first path to connect gave the session its identity. */
    private boolean identityBound;
    /** Set once, when the session leaves the server for good; see {@link #closed()}. */
    private volatile boolean closed;

    ServerSession(SessionTable table, UUID uuid, SessionLimits.Limits limits) {
        this.table = table;
        this.uuid = uuid;
        this.lock = new SessionLock<>(this, LOG, table.timer(), SessionLock.NO_STAGE);
        this.chunks = new Chunks(limits.queueDepth(), limits.chunkSize());
    }

    // ---- admission (the acceptor, through the table) ----------------------------------

    /**
     * rtrs_rdma_connect's checks of the session and the path, under the lock: the path by its
     * uuid (sess_uuid), created if new; connection {@code cid} reserved.
     */
    Sessions.Admission admit(ConReq cr, DeviceContext dev, InetSocketAddress local, InetSocketAddress remote) {
        Connection con = null;
        int errno;
        boolean dnr = false;
        synchronized (this) {
            ServerPath p = paths.get(cr.pathUuid());
            try {
                if (closed) {
                    // its last path left between the lookup and here: the client tries again
                    // and meets a new session
                    errno = Errno.ECONNRESET;
                } else if (p != null && p.reconCnt != cr.reconCnt()) {
                    // the client reconnects while we still tear the old instance down
                    p.failLocked(Errno.ECONNRESET, "client reconnected");
                    errno = Errno.EBUSY;
                } else if (p != null && (p.cidNum() != cr.cidNum())) {
                    errno = Errno.ECONNRESET;
                } else if (p == null && paths.size() >= Rtrs.MAX_PATHS) {
                    errno = Errno.ECONNRESET;
                    dnr = true;
                } else if (p == null && hasPathBetween(local, remote)) {
                    // Linux's __is_path_w_addr_exists: one path per pair of addresses
                    errno = Errno.EEXIST;
                } else if (p == null && !table.mayStartHandshake(remote.getAddress())) {
                    // many paths of one source in their handshake at once: a flood, or a host
                    // reconnecting everything at once, which retries (EAGAIN is not final)
                    errno = Errno.EAGAIN;
                } else {
                    if (p == null) {
                        p = new ServerPath(this, cr.pathUuid(), cr.reconCnt(), cr.cidNum(), cr.extensions(),
                                local.getAddress(), remote.getAddress(), dev);
                        paths.put(cr.pathUuid(), p);
                        extensions |= cr.extensions();
                        table.handshakeStarted(p.remoteAddr);
                    }
                    con = p.attach(cr.cid());
                    errno = con == null ? Errno.ECONNRESET : 0;
                }
            } catch (RdmaException e) {
                errno = e.errno();
            }
        }
        lock.afterUnlock();
        return errno != 0 ? Sessions.Admission.refused(errno, dnr)
                : new Sessions.Admission(0, false, con, chunks.queueDepth(), chunks.maxIoSize(),
                        chunks.queueDepth() + ServerPath.SERVICE_RECVS + ServerPath.SPARE_RECVS);
    }

    /** Under the lock: whether a live path already joins these two addresses (ports aside). */
    private boolean hasPathBetween(InetSocketAddress local, InetSocketAddress remote) {
        for (ServerPath p : paths.values()) {
            if (!p.closingOrClosed() && p.localAddr.equals(local.getAddress())
                    && p.remoteAddr.equals(remote.getAddress())) {
                return true;
            }
        }
        return false;
    }

    /** The device leaves: the paths on it give back everything of it now, and drain later. */
    void deviceRemoved(DeviceContext dev) {
        List<ServerPath> onDev = new ArrayList<>();
        synchronized (this) {
            for (ServerPath p : paths.values()) {
                if (p.dev == dev) {
                    onDev.add(p);
                }
            }
        }
        onDev.forEach(ServerPath::releaseResources);
    }

    /** Under the lock: no path left. */
    boolean empty() {
        return paths.isEmpty();
    }

    /** The session left the server: no path may join it, and the upper layer must let go of it. */
    void markClosed() {
        closed = true;
    }

    // ---- PathSession -------------------------------------------------------------------

    @Override
    public ServerConfig cfg() {
        return table.cfg();
    }

    @Override
    public RtrsServerSession view() {
        return this;
    }

    @Override
    public Authenticator authenticator() {
        return table.authenticator();
    }

    @Override
    public void locked(Runnable r) {
        lock.locked(r);
    }

    @Override
    public void afterUnlock() {
        lock.afterUnlock();
    }

    @Override
    public void closeAfterUnlock(Runnable teardown) {
        lock.closeAfterUnlock(teardown);
    }

    @Override
    public ScheduledFuture<?> later(long delayMs, Runnable underLock) {
        return lock.later(delayMs, underLock);
    }

    @Override
    public ScheduledFuture<?> every(long periodMs, Runnable underLock) {
        return lock.every(periodMs, underLock);
    }

    @Override
    public long nanoTime() {
        return table.nanoTime();
    }

    @Override
    public Chunks chunks() {
        return chunks;
    }

    @Override
    public ServerStats stats() {
        return stats;
    }

    @Override
    public void handshakeEnded(InetAddress source) {
        table.handshakeEnded(source);
    }

    @Override
    public void handshakeTimedOut() {
        table.handshakeTimedOut();
    }

    /**
     * As a path finishes its handshake: the first path names the session and gives it the
     * identity it authenticated with; every later path must name the same session, present
     * the same host id, and if the session's was proven, prove it too. A path that proves an
     * id the session only claimed joins it, and the session stays unproven: its first path
     * proved nothing.
     */
    @Override
    public Refusal join(String pathName, String host, boolean proven, String method) {
        if (table.nameTakenElsewhere(pathName, this)) {
            return new Refusal(Errno.EPERM, "session name " + pathName + " is another session's");
        }
        if (!name.isEmpty() && !name.equals(pathName)) {
            return new Refusal(Errno.EINVAL, "path names another session");
        }
        if (!identityBound) {
            identityBound = true;
            hostId = host;
            hostIdProven = proven;
            authMethod = method;
        } else if (!hostId.equals(host)) {
            return new Refusal(Errno.EACCES, "the path says host id '" + host + "', the session's is '" + hostId + "'");
        } else if (hostIdProven && !proven) {
            return new Refusal(Errno.EACCES, "the session's host id '" + hostId + "' was proven (" + authMethod
                    + "), this path's is not (" + (method.isEmpty() ? "no authentication" : method) + ")");
        }
        if (name.isEmpty()) {
            name = pathName;
        }
        return null;
    }

    @Override
    public void connected() {
        table.upper().sessionConnected(this);
    }

    @Override
    public ServerPath path(UUID pathUuid) {
        return paths.get(pathUuid);
    }

    @Override
    public void dispatch(RtrsServerRequest r) {
        table.upper().dispatch(r);
    }

    @Override
    public void pathGone(ServerPath p) {
        paths.remove(p.uuid, p);
        if (paths.isEmpty()) {
            table.lastPathGone(this);
        }
    }

    // ---- RtrsServerSession -------------------------------------------------------------

    @Override
    public String name() {
        return name;
    }

    @Override
    public String hostId() {
        return hostId;
    }

    @Override
    public boolean hostIdProven() {
        return hostIdProven;
    }

    @Override
    public boolean extensions() {
        return extensions;
    }

    @Override
    public String authMethod() {
        return authMethod;
    }

    @Override
    public UUID uuid() {
        return uuid;
    }

    @Override
    public synchronized int pathCount() {
        int n = 0;
        for (ServerPath p : paths.values()) {
            if (p.connected()) {
                n++;
            }
        }
        return n;
    }

    @Override
    public boolean closed() {
        return closed;
    }

    @Override
    public void close() {
        List<ServerPath> ps;
        synchronized (this) {
            ps = new ArrayList<>(paths.values());
        }
        for (ServerPath p : ps) {
            p.fail(Errno.ECONNRESET, "session closed");
        }
    }

    synchronized RtrsServerSessionInfo info() {
        List<RtrsServerPathInfo> ps = new ArrayList<>();
        for (ServerPath p : paths.values()) {
            ps.add(p.info());
        }
        return new RtrsServerSessionInfo(name, hostId, uuid, chunks.queueDepth(), chunks.chunkSize(), ps,
                stats.snapshot());
    }

    @Override
    public String toString() {
        return "session " + name + " (" + uuid + ")";
    }
}

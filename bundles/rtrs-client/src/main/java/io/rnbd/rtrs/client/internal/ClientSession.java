package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.IoDone;
import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
import io.rnbd.rtrs.api.RtrsClientSession;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.api.RtrsPlug;
import io.rnbd.rtrs.api.RtrsSessionListener;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.rtrs.core.SessionLock;
import io.rnbd.rtrs.proto.ConRsp;
import io.rnbd.rtrs.proto.FenceRsp;
import io.rnbd.rtrs.proto.Rtrs;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * An RTRS client session: named, one or more paths, one pool of permits (the server's
 * queue depth) shared by all paths, requests beyond the permits queued FIFO. This class is
 * the session's face (its API, state, paths and admin); its parts, each guarded by the
 * session lock, are {@link SessionLock} (rtrs-core's, the server's too: the lock and what runs
 * after it) and {@link Doorbells} (the IO posts it rings after the lock, as its stage), {@link Permits} (submission and completion), {@link Failover} (fencing),
 * {@link FirstConn} (who may create the session on the server) and {@link MpPolicy}. Its
 * paths see it only through {@link PathSession}.
 *
 * <p><b>Failover ordering rule.</b> When a path fails, the requests it had in flight are
 * resubmitted on a healthy path exactly once, but only after the server has fenced the
 * failed path: the client sends FENCE(path, recon_cnt) on a healthy path's connection 0,
 * and the server answers only once that path is closed and every request of it the upper
 * layer had started has completed (the rest are dropped unstarted). So a resubmitted
 * write can never be overtaken by its own stale copy landing after a newer acknowledged
 * write to the same blocks. The same holds for the permits: a failed request's chunk is
 * reused only after the fence. A path that reconnects with the same UUID is admitted by
 * the server only after its old instance has drained, which fences it implicitly.
 *
 * <p>Threading: one lock (this object) guards the session and its paths; user callbacks
 * run after the lock is released, on the thread that completed the request.
 */
public final class ClientSession implements RtrsClientSession {
    private static final Logger LOG = LoggerFactory.getLogger(ClientSession.class);

    final ClientConfig cfg;
    final ScheduledExecutorService timer;
    final List<ClientPath> paths = new CopyOnWriteArrayList<>();
    final Doorbells doorbells = new Doorbells(this);
    final SessionLock<PathIo.Post[]> lock;
    final Permits permits = new Permits(this);
    final Failover failover = new Failover(this);
    final MpPolicy mp;
    private final FirstConn firstConn;
    private final PathSession forPaths = new ForPaths();
    private final DeviceSet devices;
    private final LongSupplier nanos;
    private final UUID uuid = UUID.randomUUID();
    private final ReconnectPolicy reconnectPolicy;
    private final Supplier<Authenticator> auth;
    private final List<RtrsSessionListener> listeners = new CopyOnWriteArrayList<>();
    private final Consumer<RdmaDevice> onDeviceRemoved = this::deviceRemoved;
    private ScheduledFuture<?> timeoutSweep;
    private volatile SessionState state = SessionState.CONNECTING;
    private volatile int lastError;
    private boolean everConnected;
    private boolean closed;

    /**
     * Opens the session and starts connecting every configured path.
     *
     * @param devices the devices the RTRS client got from the registry
     * @param auth    the authenticator now (null = none)
     * @param timer   heartbeats, reconnects and timeouts; owned by the caller
     */
    public ClientSession(ClientConfig cfg, DeviceSet devices, Supplier<Authenticator> auth,
                         ScheduledExecutorService timer, LongSupplier nanos) {
        this.cfg = cfg;
        this.devices = devices;
        this.auth = auth;
        this.timer = timer;
        this.nanos = nanos;
        this.firstConn = new FirstConn(paths, nanos);
        this.lock = new SessionLock<>(this, LOG, timer, new SessionLock.Stage<>() {
            @Override
            public void beforeUnlock() {
                updateState();
            }

            @Override
            public PathIo.Post[] take() {
                return doorbells.isEmpty() ? null : doorbells.take();
            }

            @Override
            public void run(PathIo.Post[] posts) {
                if (!doorbells.hold(posts)) {
                    doorbells.ring(posts);
                }
            }
        });
        this.mp = new MpPolicy(cfg.mpPolicy());
        this.reconnectPolicy = new ReconnectPolicy(cfg.maxReconnectAttempts(), cfg.reconnectDelayMs(),
                cfg.reconnectBackoffMs(), uuid.getLeastSignificantBits() ^ cfg.sessionName().hashCode());
        devices.listen(onDeviceRemoved);
        if (cfg.requestTimeoutMs() > 0) {
            long period = Math.max(10, Math.min(1000, cfg.requestTimeoutMs() / 4));
            timeoutSweep = lock.every(period, this::sweepStuckRequests);
        }
        lock.locked(() -> {
            for (PathAddress a : cfg.paths()) {
                ClientPath p = new ClientPath(forPaths, a);
                paths.add(p);
                p.handshake.connect();
            }
        });
    }

    // ---- RtrsClientSession ------------------------------------------------------------

    @Override
    public String name() {
        return cfg.sessionName();
    }

    @Override
    public SessionState state() {
        return state;
    }

    @Override
    public int lastError() {
        return lastError;
    }

    @Override
    public int queueDepth() {
        return permits.queueDepth();
    }

    @Override
    public int maxIoSize() {
        return permits.maxIoSize();
    }

    @Override
    public int maxHdrSize() {
        return permits.maxHdrSize();
    }

    @Override
    public void write(ByteBuffer usrHdr, ByteBuffer data, IoDone done) {
        ClientRequest r = new ClientRequest(true, usrHdr, data, done);
        lock.locked(() -> permits.submit(r));
    }

    @Override
    public void read(ByteBuffer usrHdr, ByteBuffer dst, IoDone done) {
        ClientRequest r = new ClientRequest(false, usrHdr, dst, done);
        lock.locked(() -> permits.submit(r));
    }

    @Override
    public RtrsPlug plug() {
        return doorbells.plug();
    }

    @Override
    public void failOutstanding(int errno) {
        // locked, not lockedAndRelease: not a removal; teardown it queues goes to the timer,
        // the caller (a device's resolution, perhaps on a provider thread) does not wait for it
        lock.locked(() -> permits.failOutstanding(errno));
    }

    @Override
    public void addListener(RtrsSessionListener l) {
        listeners.add(l);
    }

    @Override
    public void removeListener(RtrsSessionListener l) {
        listeners.remove(l);
    }

    @Override
    public void close() {
        if (timeoutSweep != null) {
            timeoutSweep.cancel(false);
        }
        lock.lockedAndRelease(() -> {
            if (closed) {
                return;
            }
            closed = true;
            List<ClientRequest> all = new ArrayList<>();
            for (ClientPath p : paths) {
                all.addAll(p.close(true));
            }
            all.addAll(permits.takeQueued());
            all.addAll(failover.takeAll());
            for (ClientRequest r : all) {
                permits.complete(r, Errno.ESHUTDOWN, false);
            }
        });
        devices.unlisten(onDeviceRemoved);
    }

    // ---- session state ----------------------------------------------------------------

    /** Under the lock. */
    boolean closed() {
        return closed;
    }

    /** Under the lock: fail every path that holds a request older than the request timeout. */
    private void sweepStuckRequests() {
        long now = nanos.getAsLong();
        long limit = TimeUnit.MILLISECONDS.toNanos(cfg.requestTimeoutMs());
        for (ClientPath p : paths) {
            p.io.timeOutStuck(now, limit);
        }
    }

    private void deviceRemoved(RdmaDevice d) {
        lock.lockedAndRelease(() -> {
            for (ClientPath p : paths) {
                if (p.usesDevice(d)) {
                    p.fail(Errno.ENODEV, "device " + d.name() + " removed");
                }
            }
        });
    }

    /** Under the lock, after each section: the session's state from its paths'. */
    void updateState() {
        SessionState s;
        boolean anyConnected = false;
        boolean anyTrying = false;
        for (ClientPath p : paths) {
            PathState ps = p.state();
            anyConnected |= ps == PathState.CONNECTED;
            anyTrying |= ps == PathState.CONNECTING || ps == PathState.RECONNECTING;
        }
        if (closed) {
            s = SessionState.CLOSED;
        } else if (anyConnected) {
            s = SessionState.CONNECTED;
        } else if (anyTrying || paths.stream().anyMatch(p -> p.state() == PathState.CLOSED)) {
            s = everConnected ? SessionState.DISCONNECTED : SessionState.CONNECTING;
        } else {
            s = SessionState.FAILED;
        }
        if (s == state) {
            return;
        }
        if (s == SessionState.DISCONNECTED) {
            firstConn.lost();
        }
        state = s;
        int err = s == SessionState.FAILED ? lastError : 0;
        LOG.info("session {} is {}{}", name(), s, err == 0 ? "" : " (" + Errno.name(err) + ")");
        if (s == SessionState.FAILED) {
            for (ClientRequest r : permits.takeQueued()) {
                permits.complete(r, Errno.EIO, true);
            }
        }
        for (RtrsSessionListener l : listeners) {
            lock.defer(() -> l.onStateChange(this, s, err));
        }
    }

    // ---- the session as its paths see it ------------------------------------------------

    /** {@link PathSession}, kept off this public class's API: each call goes to the part that owns it. */
    private final class ForPaths implements PathSession {
        @Override
        public ClientConfig cfg() {
            return cfg;
        }

        @Override
        public UUID uuid() {
            return uuid;
        }

        @Override
        public RdmaDevice device(InetAddress src) {
            return devices.find(src);
        }

        @Override
        public Authenticator authenticator() {
            return auth.get();
        }

        @Override
        public ReconnectPolicy reconnectPolicy() {
            return reconnectPolicy;
        }

        @Override
        public void locked(Runnable r) {
            lock.locked(r);
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
        public void closeAfterUnlock(Runnable teardown) {
            lock.closeAfterUnlock(teardown);
        }

        @Override
        public long nanoTime() {
            return nanos.getAsLong();
        }

        @Override
        public boolean mayConnect(ClientPath p) {
            return firstConn.mayConnect(p);
        }

        @Override
        public long mayConnectAgainInMs() {
            return Math.max(1, firstConn.holdLeftMs());
        }

        @Override
        public boolean mayCreate(ClientPath p) {
            return firstConn.mayCreate(p);
        }

        @Override
        public int accepted(ClientPath p, int cid, ConRsp rsp) {
            boolean othersConnected = false;
            for (ClientPath o : paths) {
                othersConnected |= o != p && o.state() == io.rnbd.rtrs.api.PathState.CONNECTED;
            }
            int err = permits.negotiated(rsp, othersConnected);
            if (err == 0 && cid == 0) {
                firstConn.accepted();
            }
            return err;
        }

        @Override
        public ByteBuffer memory() {
            return permits.memory();
        }

        @Override
        public int slotSize() {
            return permits.slotSize();
        }

        @Override
        public int queueDepth() {
            return permits.queueDepth();
        }

        @Override
        public void ringAfterUnlock(PathIo.Post post) {
            doorbells.add(post);
        }

        @Override
        public void finish(ClientRequest r, int errno) {
            permits.finish(r, errno);
        }

        @Override
        public void connected(ClientPath p) {
            everConnected = true;
            failover.sendFences();
            permits.releasePending();
        }

        @Override
        public void connectFailed(ClientPath p, int errno, boolean retrying) {
            firstConn.connectFailed(p);
            if (!retrying) {
                lastError = errno;
            }
        }

        @Override
        public void failover(ClientPath p, int reconCnt, List<ClientRequest> orphans) {
            failover.failover(p, reconCnt, orphans);
        }

        @Override
        public void fenced(ClientPath on, FenceRsp rsp) {
            failover.fenced(rsp);
        }
    }

    // ---- policy and admin ---------------------------------------------------------------

    /** The policy services present, best-ranked first; picks the configured one or falls back. */
    public void policies(List<MultipathPolicy> ranked) {
        mp.policies(ranked);
    }

    /** The same, each service known by the name it announces. */
    void namedPolicies(List<MpPolicy.Named> ranked) {
        mp.named(ranked);
    }

    public void mpPolicy(String name) {
        mp.configure(name);
    }

    public String activePolicy() {
        return mp.active();
    }

    ClientPath path(String name) {
        for (ClientPath p : paths) {
            if (p.name().equals(name) || p.name().equals(PathAddress.parse(name, p.addr.port()).name())) {
                return p;
            }
        }
        throw new IllegalArgumentException("no path " + name + " in session " + name());
    }

    public void addPath(PathAddress a) {
        lock.locked(() -> {
            if (closed) {
                throw new IllegalStateException("session " + name() + " is closed");
            }
            if (paths.size() >= Rtrs.MAX_PATHS) {
                throw new IllegalArgumentException("session " + name() + " already has " + Rtrs.MAX_PATHS + " paths");
            }
            for (ClientPath p : paths) {
                if (p.name().equals(a.name())) {
                    throw new IllegalArgumentException("path " + a.name() + " exists");
                }
            }
            ClientPath p = new ClientPath(forPaths, a);
            paths.add(p);
            p.handshake.connect();
        });
    }

    public void removePath(String name) {
        lock.locked(() -> {
            ClientPath p = path(name);
            List<ClientRequest> orphans = p.close(true);
            paths.remove(p);
            failover.failover(p, p.reconCnt(), orphans);
        });
    }

    public void disconnectPath(String name) {
        lock.locked(() -> {
            ClientPath p = path(name);
            failover.failover(p, p.reconCnt(), p.close(false));
        });
    }

    public void reconnectPath(String name) {
        lock.locked(() -> path(name).reconnectNow());
    }

    public void maxReconnectAttempts(int n) {
        reconnectPolicy.maxAttempts(n);
    }

    public void resetStats() {
        paths.forEach(p -> p.stats.reset());
    }

    public List<RtrsClientPathInfo> pathInfo() {
        synchronized (this) {
            List<RtrsClientPathInfo> out = new ArrayList<>();
            for (ClientPath p : paths) {
                out.add(p.info());
            }
            return out;
        }
    }

    public RtrsClientSessionInfo info() {
        return new RtrsClientSessionInfo(name(), state, lastError, queueDepth(), mp.configured(), activePolicy(),
                reconnectPolicy.maxAttempts(), pathInfo());
    }

    @Override
    public String toString() {
        return "session " + name();
    }
}

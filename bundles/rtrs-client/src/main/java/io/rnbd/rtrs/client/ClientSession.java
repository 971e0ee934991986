package io.rnbd.rtrs.client;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.IoDone;
import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.PathView;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
import io.rnbd.rtrs.api.RtrsClientSession;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.api.RtrsPlug;
import io.rnbd.rtrs.api.RtrsSessionListener;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.rtrs.proto.ConRsp;
import io.rnbd.rtrs.proto.FenceRsp;
import io.rnbd.rtrs.proto.RdmaReadMsg;
import io.rnbd.rtrs.proto.RdmaWriteMsg;
import io.rnbd.rtrs.proto.Rtrs;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * An RTRS client session: named, one or more paths, one pool of permits (the server's
 * queue depth) shared by all paths, requests beyond the permits queued FIFO.
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
    final DeviceSet devices;
    final ScheduledExecutorService timer;
    final LongSupplier nanos;
    final UUID uuid = UUID.randomUUID();
    final ReconnectPolicy reconnectPolicy;
    private final Supplier<Authenticator> auth;
    private final AtomicReference<MultipathPolicy> policy = new AtomicReference<>(RoundRobinPolicy.INSTANCE);
    private volatile List<MultipathPolicy> rankedPolicies = List.of();
    private volatile String mpPolicyName;
    private final List<ClientPath> paths = new CopyOnWriteArrayList<>();
    private final List<RtrsSessionListener> listeners = new CopyOnWriteArrayList<>();
    private final Deque<ClientRequest> waiters = new ArrayDeque<>();
    private final Deque<ClientRequest> pending = new ArrayDeque<>();
    private final Deque<Integer> freePermits = new ArrayDeque<>();
    private final List<FenceGroup> unfenced = new ArrayList<>();
    private final Map<Integer, FenceGroup> fencesSent = new HashMap<>();
    private final Deque<Runnable> deferred = new ArrayDeque<>();
    private final Deque<Runnable> closers = new ArrayDeque<>();
    /** IO posts prepared under the lock, to be rung after it ({@link #ringAfterUnlock}). Guarded by this. */
    private final Deque<ClientPath.Post> doorbells = new ArrayDeque<>();
    /** The plug each thread holds on this session, if any: thread-confined. */
    private final ThreadLocal<SessionPlug> plugs = new ThreadLocal<>();
    /** Nesting of {@link #lockedThen} on the thread that holds the lock. Guarded by this. */
    private int depth;
    private final Consumer<RdmaDevice> onDeviceRemoved = this::deviceRemoved;
    private ScheduledFuture<?> timeoutSweep;
    private int fenceSeq;
    private long sequence;
    private volatile int queueDepth;
    private volatile int maxIoSize;
    private volatile int maxHdrSize;
    private int slotSize;
    private ByteBuffer memory;
    private volatile SessionState state = SessionState.CONNECTING;
    private volatile int lastError;
    private boolean everConnected;
    private boolean closed;
    /** Some path's connection 0 was accepted: the server knows this session (see {@link #mayConnect}). */
    private boolean acceptedOnce;
    private boolean creatorFailed;

    /** Requests of one failed path instance, waiting for the server to fence it. */
    private static final class FenceGroup {
        final int id;
        final UUID pathUuid;
        final int reconCnt;
        final List<ClientRequest> requests;
        ClientPath sentOn;

        FenceGroup(int id, UUID pathUuid, int reconCnt, List<ClientRequest> requests) {
            this.id = id;
            this.pathUuid = pathUuid;
            this.reconCnt = reconCnt;
            this.requests = requests;
        }
    }

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
        this.mpPolicyName = cfg.mpPolicy();
        this.reconnectPolicy = new ReconnectPolicy(cfg.maxReconnectAttempts(), cfg.reconnectDelayMs(),
                cfg.reconnectBackoffMs(), uuid.getLeastSignificantBits() ^ cfg.sessionName().hashCode());
        devices.listen(onDeviceRemoved);
        if (cfg.requestTimeoutMs() > 0) {
            long period = Math.max(10, Math.min(1000, cfg.requestTimeoutMs() / 4));
            timeoutSweep = timer.scheduleAtFixedRate(() -> locked(this::sweepStuckRequests), period, period,
                    TimeUnit.MILLISECONDS);
        }
        locked(() -> {
            for (PathAddress a : cfg.paths()) {
                ClientPath p = new ClientPath(this, a);
                paths.add(p);
                p.connect();
            }
        });
    }

    // ---- lock and deferred callbacks -------------------------------------------------

    void closeAfterUnlock(Runnable closer) {
        closers.add(closer);
    }

    /** Under the lock: ring {@code post} on this thread once the lock is released, or when its plug closes. */
    void ringAfterUnlock(ClientPath.Post post) {
        doorbells.add(post);
    }

    /**
     * Outside the lock: post each connection's share of {@code posts} as one chain, in order.
     * On the soft provider a chain is one socket write, where each post alone was one.
     */
    void ring(ClientPath.Post[] posts) {
        if (posts.length == 1) {
            ring(posts[0].con, List.of(posts[0]));
            return;
        }
        Map<ClientCon, List<ClientPath.Post>> byCon = new LinkedHashMap<>();
        for (ClientPath.Post p : posts) {
            byCon.computeIfAbsent(p.con, c -> new ArrayList<>()).add(p);
        }
        byCon.forEach(this::ring);
    }

    private void ring(ClientCon con, List<ClientPath.Post> posts) {
        List<SendWr> chain = new ArrayList<>(posts.size());
        List<ClientPath.Post> prepared = new ArrayList<>(posts.size());
        for (ClientPath.Post p : posts) {
            try {
                chain.add(p.prepare());
                prepared.add(p);
            } catch (RuntimeException e) {
                LOG.error("session {}: preparing a post failed", cfg.sessionName(), e);
                p.failed(Errno.EIO);
            }
        }
        if (chain.isEmpty()) {
            return;
        }
        int errno;
        try {
            con.postIo(chain);
            prepared.forEach(ClientPath.Post::posted);
            return;
        } catch (RdmaException e) {
            errno = e.errno();
        } catch (RuntimeException e) {
            LOG.error("session {}: provider failed a post", cfg.sessionName(), e);
            errno = Errno.EIO;
        }
        // some of the chain may be out: failing the path fails over all of it, posted or not
        for (ClientPath.Post p : prepared) {
            p.failed(errno);
        }
    }

    @Override
    public RtrsPlug plug() {
        if (plugs.get() != null) {
            return RtrsPlug.NONE;
        }
        SessionPlug p = new SessionPlug();
        plugs.set(p);
        return p;
    }

    /** What one thread's plug holds back: its posts, rung together when it closes. */
    final class SessionPlug implements RtrsPlug {
        private final Thread owner = Thread.currentThread();
        /** Owner thread only; package-visible for tests, which look at where posts go. */
        final List<ClientPath.Post> held = new ArrayList<>();
        private boolean closed;

        @Override
        public void close() {
            if (Thread.currentThread() != owner) {
                throw new IllegalStateException("a plug is closed by the thread that took it");
            }
            if (closed) {
                return;
            }
            closed = true;
            plugs.remove();
            if (!held.isEmpty()) {
                ring(held.toArray(new ClientPath.Post[0]));
            }
        }
    }

    /**
     * Run {@code r} under the session lock, then the user callbacks it produced. Queue-pair
     * teardown it produced goes to the timer thread: closing waits for the provider's
     * thread, and the thread we are on may be another device's provider thread doing the
     * same towards us.
     */
    void locked(Runnable r) {
        lockedThen(r, false);
    }

    /** As {@link #locked}, but tear down on this thread before returning (device removal, close). */
    private void lockedAndRelease(Runnable r) {
        lockedThen(r, true);
    }

    private void lockedThen(Runnable r, boolean releaseHere) {
        AfterUnlock after;
        synchronized (this) {
            depth++;
            try {
                r.run();
                updateState();
            } finally {
                depth--;
            }
            if (depth > 0) {
                return; // the outermost call runs what this one queued
            }
            after = AfterUnlock.take(this);
        }
        // One monitor section per batch, not per item: the submitting thread and the
        // completing thread both come through here once per IO.
        while (after != null) {
            after.run(this, releaseHere);
            synchronized (this) {
                after = AfterUnlock.take(this);
            }
        }
    }

    /** What the lock queued for after its release, taken in one go: teardown, IO posts, callbacks. */
    private record AfterUnlock(Runnable[] closers, ClientPath.Post[] doorbells, Runnable[] callbacks) {
        private static final Runnable[] NONE = {};
        private static final ClientPath.Post[] NO_POSTS = {};

        /** Under the lock; null when nothing is queued. */
        static AfterUnlock take(ClientSession s) {
            if (s.closers.isEmpty() && s.doorbells.isEmpty() && s.deferred.isEmpty()) {
                return null;
            }
            ClientPath.Post[] posts = s.doorbells.isEmpty() ? NO_POSTS : s.doorbells.toArray(NO_POSTS);
            s.doorbells.clear();
            return new AfterUnlock(drain(s.closers), posts, drain(s.deferred));
        }

        private static Runnable[] drain(Deque<Runnable> q) {
            if (q.isEmpty()) {
                return NONE;
            }
            Runnable[] a = q.toArray(NONE);
            q.clear();
            return a;
        }

        /** Every item runs, whatever another threw: they are out of the session's queues now. */
        void run(ClientSession s, boolean releaseHere) {
            for (Runnable c : closers) {
                safely(s, "teardown", () -> {
                    if (releaseHere) {
                        c.run();
                    } else {
                        try {
                            s.timer.execute(c);
                        } catch (RejectedExecutionException stopped) {
                            c.run();
                        }
                    }
                });
            }
            if (doorbells.length > 0) {
                SessionPlug plug = s.plugs.get();
                if (plug != null) {
                    plug.held.addAll(Arrays.asList(doorbells));
                } else {
                    safely(s, "post", () -> s.ring(doorbells));
                }
            }
            for (Runnable d : callbacks) {
                safely(s, "callback", d);
            }
        }

        private static void safely(ClientSession s, String what, Runnable r) {
            try {
                r.run();
            } catch (RuntimeException e) {
                LOG.warn("session {}: {} failed", s.cfg.sessionName(), what, e);
            }
        }
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
        return queueDepth;
    }

    @Override
    public int maxIoSize() {
        return maxIoSize;
    }

    @Override
    public int maxHdrSize() {
        return maxHdrSize;
    }

    @Override
    public void write(ByteBuffer usrHdr, ByteBuffer data, IoDone done) {
        ClientRequest r = new ClientRequest(true, usrHdr, data, done);
        locked(() -> submit(r));
    }

    @Override
    public void read(ByteBuffer usrHdr, ByteBuffer dst, IoDone done) {
        ClientRequest r = new ClientRequest(false, usrHdr, dst, done);
        locked(() -> submit(r));
    }

    @Override
    public void addListener(RtrsSessionListener l) {
        listeners.add(l);
    }

    @Override
    public void removeListener(RtrsSessionListener l) {
        listeners.remove(l);
    }

    /** Under the lock: fail every path that holds a request older than the request timeout. */
    private void sweepStuckRequests() {
        long now = nanos.getAsLong();
        long limit = TimeUnit.MILLISECONDS.toNanos(cfg.requestTimeoutMs());
        for (ClientPath p : paths) {
            p.timeOutStuck(now, limit);
        }
    }

    @Override
    public void close() {
        if (timeoutSweep != null) {
            timeoutSweep.cancel(false);
        }
        lockedAndRelease(() -> {
            if (closed) {
                return;
            }
            closed = true;
            List<ClientRequest> all = new ArrayList<>();
            for (ClientPath p : paths) {
                all.addAll(p.close(true));
            }
            all.addAll(waiters);
            all.addAll(pending);
            waiters.clear();
            pending.clear();
            for (FenceGroup g : unfenced) {
                all.addAll(g.requests);
            }
            unfenced.clear();
            fencesSent.clear();
            for (ClientRequest r : all) {
                complete(r, Errno.ESHUTDOWN, false);
            }
        });
        devices.unlisten(onDeviceRemoved);
    }

    // ---- submission -------------------------------------------------------------------

    private void submit(ClientRequest r) {
        if (closed) {
            complete(r, Errno.ESHUTDOWN, false);
            return;
        }
        if (state == SessionState.FAILED) {
            complete(r, Errno.EIO, false);
            return;
        }
        if (queueDepth > 0 && !fits(r)) {
            complete(r, Errno.EMSGSIZE, false);
            return;
        }
        if (queueDepth == 0 || freePermits.isEmpty()) {
            if (queueDepth == 0 && cfg.ioTimeoutMs() == 0) {
                complete(r, Errno.EIO, false);
                return;
            }
            waiters.add(r);
            if (queueDepth == 0) {
                expireLater(r);
            }
            return;
        }
        start(r, freePermits.poll());
    }

    /** rtrs_clt_request and rtrs_clt_{write,read}_req's limits: the header, and the whole in one chunk. */
    private boolean fits(ClientRequest r) {
        int trailer = r.write ? RdmaWriteMsg.SIZE : RdmaReadMsg.size(r.dataLen == 0 ? 0 : 1);
        return r.dataLen <= maxIoSize && (long) r.usrLen + trailer <= maxHdrSize
                && (long) r.dataLen + r.usrLen + trailer <= slotSize;
    }

    /**
     * Give the request its permit's buffer, put its header there and send it. A write's data
     * is copied in by the post itself ({@link ClientRequest#copyData}), after the lock is released.
     */
    private void start(ClientRequest r, int permit) {
        if (!fits(r)) {
            freePermits.push(permit);
            complete(r, Errno.EMSGSIZE, false);
            return;
        }
        r.permit = permit;
        int base = permit * slotSize;
        ByteBuffer m = memory.duplicate().clear();
        m.position(base + r.dataLen);
        m.put(r.usrHdr.duplicate());
        if (r.write) {
            new RdmaWriteMsg(r.usrLen).encode(m);
        }
        dispatch(r);
    }

    /**
     * Send {@code r} on a path, or queue it while no path is usable. New IO also waits while
     * a fence is outstanding (see {@link #fenceBarrier}).
     */
    private void dispatch(ClientRequest r) {
        if (fenceBarrier()) {
            if (cfg.ioTimeoutMs() == 0 && paths.stream().noneMatch(ClientPath::usable)) {
                complete(r, Errno.EIO, true);
                return;
            }
            pending.add(r);
            expireLater(r);
            return;
        }
        send(r);
    }

    /**
     * The second half of the failover ordering rule: while the server has not fenced a
     * failed path instance, requests of it may still land, so nothing newer may reach the
     * server — not queued IO, not new IO, not after a full outage in which those requests
     * were failed to the caller (their group stays until its fence is answered). Requests of
     * a fenced group themselves go out at once ({@link #onFenceRsp}).
     */
    private boolean fenceBarrier() {
        return !unfenced.isEmpty();
    }

    private void send(ClientRequest r) {
        ClientPath p = choose(r);
        if (p == null) {
            if (cfg.ioTimeoutMs() == 0) {
                complete(r, Errno.EIO, true);
            } else {
                pending.add(r);
                expireLater(r);
            }
            return;
        }
        p.post(r);
    }

    private ClientPath choose(ClientRequest r) {
        List<ClientPath> fresh = new ArrayList<>();
        List<ClientPath> any = new ArrayList<>();
        for (ClientPath p : paths) {
            if (p.usable()) {
                any.add(p);
                if (!r.tried.contains(p)) {
                    fresh.add(p);
                }
            }
        }
        List<ClientPath> c = fresh.isEmpty() ? any : fresh;
        if (c.isEmpty()) {
            return null;
        }
        PathView v = policy.get().select(c, sequence++);
        return v instanceof ClientPath cp && c.contains(cp) ? cp : c.get(0);
    }

    private void expireLater(ClientRequest r) {
        if (r.expiry == null && cfg.ioTimeoutMs() > 0) {
            r.expiry = timer.schedule(() -> locked(() -> expire(r)), cfg.ioTimeoutMs(), TimeUnit.MILLISECONDS);
        }
    }

    private void expire(ClientRequest r) {
        if (r.finished) {
            return;
        }
        if (waiters.remove(r) || pending.remove(r)) {
            complete(r, Errno.EIO, true);
            return;
        }
        for (FenceGroup g : unfenced) {
            if (g.requests.contains(r)) {
                // the permit stays reserved until the fence says its chunk is free
                complete(r, Errno.EIO, false);
                return;
            }
        }
    }

    /** A response arrived for {@code r}. */
    void finish(ClientRequest r, int errno) {
        if (!r.write && errno == 0 && !r.finished) {
            ByteBuffer src = memory.duplicate().clear();
            src.position(r.permit * slotSize).limit(r.permit * slotSize + r.dataLen);
            r.data.duplicate().put(src);
        }
        complete(r, errno, true);
    }

    private void complete(ClientRequest r, int errno, boolean releasePermit) {
        if (releasePermit && r.permit >= 0) {
            if (r.write) {
                r.closeCopy();
            }
            releasePermit(r.permit);
            r.permit = -1;
        }
        if (r.finished) {
            return;
        }
        r.finished = true;
        if (r.expiry != null) {
            r.expiry.cancel(false);
        }
        deferred.add(() -> r.done.done(errno));
    }

    private void releasePermit(int permit) {
        ClientRequest next = waiters.poll();
        if (next != null) {
            start(next, permit);
        } else {
            freePermits.push(permit);
        }
    }

    // ---- paths: negotiation, failover, fencing ------------------------------------------

    // ---- who may create the session on the server (CON_REQ first_conn) ------------------

    /**
     * Whether {@code p} may connect now. Until some path has been accepted, only the creator
     * connects (the first path, as Linux's rtrs_clt_open connects path 0 before the others):
     * the others' CON_REQs could not say first_conn, and a Linux server racing two creating
     * connects of one session makes two sessions of it. Once the creator failed, the others
     * may try too.
     */
    boolean mayConnect(ClientPath p) {
        return acceptedOnce || creatorFailed || p == creator();
    }

    /** The CON_REQ's first_conn: Linux's for_new_clt, or the creator's right before any acceptance. */
    boolean mayCreate(ClientPath p) {
        return p.forNewClt || (!acceptedOnce && (p == creator() || creatorFailed));
    }

    private ClientPath creator() {
        return paths.isEmpty() ? null : paths.get(0);
    }

    /** Under the lock: the server accepted {@code p}'s connection 0, so it knows the session now. */
    void pathAccepted(ClientPath p) {
        if (!acceptedOnce) {
            acceptedOnce = true;
            kickDeferred();
        }
    }

    /** Under the lock: a connect attempt of {@code p} failed. */
    void pathConnectFailed(ClientPath p) {
        if (!acceptedOnce && !creatorFailed && p == creator()) {
            creatorFailed = true;
            kickDeferred();
        }
    }

    private void kickDeferred() {
        for (ClientPath q : paths) {
            q.connectIfDeferred();
        }
    }

    /** First CON_RSP fixes the session's queue depth and chunk size; later ones must agree. Returns an errno. */
    int negotiated(ConRsp rsp) {
        if (queueDepth == 0) {
            queueDepth = rsp.queueDepth();
            maxIoSize = rsp.maxIoSize();
            maxHdrSize = rsp.maxHdrSize();
            // a permit's buffer holds [data][user header][RTRS message], as the server's chunk
            slotSize = rsp.chunkSize();
            memory = ByteBuffer.allocateDirect(Math.multiplyExact(queueDepth, slotSize));
            for (int i = 0; i < queueDepth; i++) {
                freePermits.add(i);
            }
            List<ClientRequest> w = new ArrayList<>(waiters);
            waiters.clear();
            for (ClientRequest r : w) {
                submit(r);
            }
            return 0;
        }
        return rsp.queueDepth() == queueDepth && rsp.maxIoSize() == maxIoSize && rsp.maxHdrSize() == maxHdrSize
                ? 0 : Errno.EINVAL;
    }

    int slotSize() {
        return slotSize;
    }

    ByteBuffer memory() {
        return memory.duplicate().clear();
    }

    Authenticator authenticator() {
        return auth.get();
    }

    /** A path is up: fences first, then what queued, unless a fence is still out. */
    void pathConnected(ClientPath p) {
        everConnected = true;
        sendFences();
        releasePending();
    }

    private void releasePending() {
        if (fenceBarrier() || pending.isEmpty()) {
            return;
        }
        List<ClientRequest> w = new ArrayList<>(pending);
        pending.clear();
        for (ClientRequest r : w) {
            dispatch(r);
        }
    }

    void pathGaveUp(ClientPath p, int errno) {
        lastError = errno;
    }

    /**
     * A path failed with {@code orphans} in flight: fence it, then resubmit them. A server
     * without the extensions (Linux's) cannot fence: as Linux's client does
     * (fail_all_outstanding_reqs), the requests go to another path at once.
     */
    void failover(ClientPath failed, int reconCnt, List<ClientRequest> orphans) {
        if (!failed.serverFences()) {
            for (FenceGroup g : new ArrayList<>(fencesSent.values())) {
                if (g.sentOn == failed) {
                    fencesSent.remove(g.id);
                    g.sentOn = null;
                }
            }
            for (ClientRequest r : orphans) {
                r.path = null;
                dispatch(r);
            }
            sendFences();
            return;
        }
        for (FenceGroup g : new ArrayList<>(fencesSent.values())) {
            if (g.sentOn == failed) {
                fencesSent.remove(g.id);
                g.sentOn = null;
            }
        }
        if (!orphans.isEmpty()) {
            FenceGroup g = new FenceGroup(++fenceSeq, failed.uuid, reconCnt, new ArrayList<>(orphans));
            for (ClientRequest r : orphans) {
                r.path = null;
            }
            unfenced.add(g);
            LOG.info("session {}: {} requests of path {} wait for its fence", name(), orphans.size(), failed.name());
        }
        sendFences();
    }

    private void sendFences() {
        // Over a copy: a FENCE that cannot be posted fails its path at once, and that path's
        // failover adds its own group and sends fences itself, under this very loop. (Iterating
        // unfenced itself threw ConcurrentModificationException out of the failing path's
        // callback and left that path neither failed over nor reconnecting, found by SoakIT.)
        for (FenceGroup g : new ArrayList<>(unfenced)) {
            if (g.sentOn != null || !unfenced.contains(g)) {
                continue; // sent or answered by the nested failover meanwhile
            }
            ClientPath p = null;
            for (ClientPath c : paths) {
                if (c.usable() && c.serverFences()) {
                    p = c;
                    break;
                }
            }
            if (p == null) {
                for (ClientRequest r : g.requests) {
                    if (cfg.ioTimeoutMs() == 0) {
                        complete(r, Errno.EIO, false);
                    } else {
                        expireLater(r);
                    }
                }
                continue;
            }
            g.sentOn = p;
            fencesSent.put(g.id, g);
            p.sendFence(g.id, g.pathUuid, g.reconCnt);
        }
    }

    void onFenceRsp(ClientPath on, FenceRsp rsp) {
        FenceGroup g = fencesSent.remove(rsp.fenceId());
        if (g == null) {
            return;
        }
        unfenced.remove(g);
        LOG.info("session {}: path fenced (waited for {}, dropped {}), resubmitting {}", name(), rsp.completed(),
                rsp.dropped(), g.requests.size());
        for (ClientRequest r : g.requests) {
            if (r.finished || rsp.status() != 0) {
                complete(r, Errno.EIO, true);
            } else {
                send(r); // fenced: no stale copy of it can land any more
            }
        }
        releasePending();
    }

    private void deviceRemoved(RdmaDevice d) {
        lockedAndRelease(() -> {
            for (ClientPath p : paths) {
                if (p.usesDevice(d)) {
                    p.fail(Errno.ENODEV, "device " + d.name() + " removed");
                }
            }
        });
    }

    private void updateState() {
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
        state = s;
        int err = s == SessionState.FAILED ? lastError : 0;
        LOG.info("session {} is {}{}", name(), s, err == 0 ? "" : " (" + Errno.name(err) + ")");
        if (s == SessionState.FAILED) {
            List<ClientRequest> all = new ArrayList<>(waiters);
            all.addAll(pending);
            waiters.clear();
            pending.clear();
            for (ClientRequest r : all) {
                complete(r, Errno.EIO, true);
            }
        }
        for (RtrsSessionListener l : listeners) {
            deferred.add(() -> l.onStateChange(this, s, err));
        }
    }

    // ---- policy and admin ---------------------------------------------------------------

    /** The policy services present, best-ranked first; picks the configured one or falls back. */
    public void policies(List<MultipathPolicy> ranked) {
        rankedPolicies = List.copyOf(ranked);
        choosePolicy();
    }

    public void mpPolicy(String name) {
        mpPolicyName = name;
        choosePolicy();
    }

    private void choosePolicy() {
        MultipathPolicy pick = null;
        for (MultipathPolicy p : rankedPolicies) {
            if (p.name().equals(mpPolicyName)) {
                pick = p;
                break;
            }
        }
        if (pick == null && !rankedPolicies.isEmpty()) {
            pick = rankedPolicies.get(0);
        }
        policy.set(pick == null ? RoundRobinPolicy.INSTANCE : pick);
    }

    public String activePolicy() {
        return policy.get().name();
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
        locked(() -> {
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
            ClientPath p = new ClientPath(this, a);
            paths.add(p);
            p.connect();
        });
    }

    public void removePath(String name) {
        locked(() -> {
            ClientPath p = path(name);
            List<ClientRequest> orphans = p.close(true);
            paths.remove(p);
            failover(p, p.reconCnt(), orphans);
        });
    }

    public void disconnectPath(String name) {
        locked(() -> {
            ClientPath p = path(name);
            failover(p, p.reconCnt(), p.close(false));
        });
    }

    public void reconnectPath(String name) {
        locked(() -> path(name).reconnectNow());
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
        return new RtrsClientSessionInfo(name(), state, lastError, queueDepth, mpPolicyName, activePolicy(),
                reconnectPolicy.maxAttempts(), pathInfo());
    }

    @Override
    public String toString() {
        return "session " + name();
    }
}

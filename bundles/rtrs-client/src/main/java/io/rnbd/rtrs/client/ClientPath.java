package io.rnbd.rtrs.client;

import io.rnbd.rdma.api.RecvPool;
import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WcOpcode;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.api.AuthExchange;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.PathView;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
import io.rnbd.rtrs.proto.AuthMsg;
import io.rnbd.rtrs.proto.ConReq;
import io.rnbd.rtrs.proto.ConRsp;
import io.rnbd.rtrs.proto.FenceReq;
import io.rnbd.rtrs.proto.FenceRsp;
import io.rnbd.rtrs.proto.Imm;
import io.rnbd.rtrs.proto.InfoReq;
import io.rnbd.rtrs.proto.InfoRsp;
import io.rnbd.rtrs.proto.MsgType;
import io.rnbd.rtrs.proto.ProtoException;
import io.rnbd.rtrs.proto.RdmaReadMsg;
import io.rnbd.rtrs.proto.RdmaWriteMsg;
import io.rnbd.rtrs.proto.RkeyRsp;
import io.rnbd.rtrs.proto.Rtrs;
import io.rnbd.rtrs.proto.SgDesc;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One path of a client session: connection 0 (service) plus N IO connections, the
 * server's chunk descriptors, heartbeat, and its own reconnect loop. Every field is
 * guarded by the session lock; a connect attempt is a generation, and events of older
 * generations are ignored.
 *
 * <p>The exchange is Linux's (rtrs-clt.c): each connection's CON_REQ rides in its connect,
 * the CON_RSP in the accept; INFO_REQ/INFO_RSP on connection 0; requests are
 * RDMA_WRITE_WITH_IMMs into the server's chunks; answers arrive as empty
 * RDMA_WRITE_WITH_IMMs or, when the server runs always_invalidate, SEND_WITH_IMMs carrying
 * the chunk's new rkey; heartbeats are empty RDMA_WRITE_WITH_IMMs on connection 0. With a
 * server that answers EXT_F (another appliance) the path also authenticates and fences.
 */
final class ClientPath implements PathView {
    private static final Logger LOG = LoggerFactory.getLogger(ClientPath.class);
    private static final int SERVICE_RECVS = 16;
    /** Beyond one per permit on an IO connection. */
    private static final int SPARE_RECVS = 16;
    private static final long CONNECT_TIMEOUT_MS = 30_000;

    final ClientSession session;
    final PathAddress addr;
    final UUID uuid = UUID.randomUUID();
    final PathStateMachine sm = new PathStateMachine();
    final PathStats stats = new PathStats();
    final Map<Integer, ClientRequest> inflight = new HashMap<>();
    private int gen;
    private int reconCnt;
    private RdmaDevice device;
    private ProtectionDomain pd;
    /**
     * The session's buffer, registered for local access only: the source of requests and
     * read messages. No peer can write it (issue 21: it used to be remote-writable whole,
     * for as long as the path lived).
     */
    private MemoryRegion memMr;
    /**
     * Per read in flight (by permit): a registration of exactly the pages the server is to
     * write the read's data into, made when the read is posted and closed when its answer
     * arrives, before the caller sees the data, or when the path goes. Its rkey is a fresh
     * one each time, so the server can reach no other memory of ours and this memory for no
     * longer than the read is in flight.
     */
    private final Map<Integer, MemoryRegion> readMrs = new HashMap<>();
    private ClientCon[] cons = new ClientCon[0];
    private SgDesc[] rbufs;
    private int[] rkeys;
    /** From this instance's CON_RSP: answers carry RKEY_RSP (always_invalidate on the server). */
    private boolean newRkey;
    /** From this instance's CON_RSP: the server is an appliance (EXT_F). */
    private boolean serverExtensions;
    private int chunkSize;
    /**
     * Linux's for_new_clt: this path may ask the server to create the session (first_conn);
     * set once the server accepted it, so any path that has been in the session can bring it
     * back after a server restart.
     */
    boolean forNewClt;
    /** Waiting for its turn: another path is creating the session on the server. */
    private boolean deferred;
    private AuthExchange auth;
    private String authMethod;
    int attempts;
    int lastError;
    private int missedHb;
    private long hbSentNanos;
    private volatile long hbRtt;
    private volatile long ioLatency;
    private volatile int inflightCount;
    private ScheduledFuture<?> hbTask;
    private ScheduledFuture<?> timerTask;
    private boolean everConnected;
    private boolean manualStop;

    ClientPath(ClientSession session, PathAddress addr) {
        this.session = session;
        this.addr = addr;
    }

    @Override
    public String name() {
        return addr.name();
    }

    @Override
    public int inflight() {
        return inflightCount;
    }

    @Override
    public long heartbeatRttNanos() {
        return hbRtt;
    }

    @Override
    public long ioLatencyNanos() {
        return ioLatency;
    }

    PathState state() {
        return sm.state();
    }

    int reconCnt() {
        return reconCnt;
    }

    private boolean change(PathState to) {
        PathState from = sm.state();
        if (!sm.change(to)) {
            LOG.debug("path {}: {} -> {} not allowed", name(), from, to);
            return false;
        }
        LOG.debug("path {}: {} -> {}", name(), from, to);
        return true;
    }

    // ---- connecting -----------------------------------------------------------------

    /** Under the lock, in CONNECTING: open every connection of a new generation. */
    void connect() {
        if (!session.mayConnect(this)) {
            // another path is creating the session on the server: two creators would race
            deferred = true;
            return;
        }
        deferred = false;
        gen++;
        reconCnt = (reconCnt + 1) & 0xffff;
        device = session.devices.find(addr.src());
        if (device == null) {
            connectFailed(Errno.ENODEV, "no RDMA device for " + (addr.src() == null ? "any address" : addr.src()));
            return;
        }
        int n = 1 + session.cfg.effectiveCons();
        boolean firstConn = session.mayCreate(this);
        try {
            pd = device.allocPd();
            cons = new ClientCon[n];
            // the queue depth is known only from CON_RSP: size for the largest the device allows
            int wr = Math.min(device.attributes().maxQpWr(), 2 * Rtrs.MAX_SESS_QUEUE_DEPTH + 64);
            for (int cid = 0; cid < n; cid++) {
                ClientCon c = new ClientCon(this, gen, cid, pd);
                cons[cid] = c;
                QpInit init = new QpInit(pd, wr, wr, 1, c);
                ConReq req = new ConReq(cid, n, reconCnt, uuid, session.uuid, firstConn, true);
                c.qp = device.connect(addr.destination(), init, req.toBytes(), c);
            }
        } catch (RdmaException e) {
            connectFailed(e.errno(), e.getMessage());
            return;
        }
        timerTask = session.timer.schedule(() -> session.locked(() -> {
            if (sm.state() == PathState.CONNECTING) {
                connectFailed(Errno.ETIMEDOUT, "connect timeout");
            }
        }), CONNECT_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    /** Under the lock: the session says it is this path's turn to connect. */
    void connectIfDeferred() {
        if (deferred && sm.state() == PathState.CONNECTING) {
            connect();
        }
    }

    void onCmEvent(ClientCon c, CmEvent e) {
        session.locked(() -> {
            if (c.gen != gen) {
                return;
            }
            try {
                switch (e.type()) {
                    case ESTABLISHED -> onConRsp(c, ConRsp.decode(e.privateData()));
                    case REJECTED -> onRejected(e);
                    default -> fail(ClientCon.errnoOf(e), "connection " + e.detail());
                }
            } catch (ProtoException ex) {
                fail(ex.errno(), "connection " + c.cid + ": " + ex.getMessage());
            } catch (RdmaException ex) {
                fail(ex.errno(), ex.getMessage());
            }
        });
    }

    /** rtrs_rdma_conn_rejected: the reason is the CON_RSP's errno when the reject carries one. */
    private void onRejected(CmEvent e) {
        int errno = ClientCon.errnoOf(e);
        boolean dnr = false;
        byte[] pd = e.privateData();
        if (pd.length >= ConRsp.SIZE) {
            try {
                ConRsp rsp = ConRsp.decode(pd);
                if (rsp.errno() != 0) {
                    errno = rsp.errno();
                    dnr = rsp.has(ConRsp.DNR_F) && rsp.has(ConRsp.EXT_F);
                }
            } catch (ProtoException malformed) {
                LOG.debug("path {}: reject with malformed private data", name());
            }
        }
        fail(errno | (dnr ? ReconnectPolicy.DNR : 0), "server refused: " + Errno.name(errno));
    }

    void onConError(ClientCon c, int errno, String why) {
        session.locked(() -> {
            if (c.gen == gen) {
                fail(errno, why);
            }
        });
    }

    void onRecv(ClientCon c, WorkCompletion wc) {
        session.locked(() -> {
            if (c.gen != gen) {
                return;
            }
            missedHb = 0;
            try {
                if (wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM) {
                    onImm(c, wc.imm(), null);
                } else if (wc.hasImm()) {
                    // SEND_WITH_IMM: an answer carrying its chunk's new rkey (always_invalidate)
                    onImm(c, wc.imm(), c.received(wc));
                } else if (wc.withInv()) {
                    // a SEND_WITH_INV of a read region we never asked to have invalidated: nothing to do
                    LOG.debug("path {}: unasked invalidation of rkey {}", name(), wc.invalidatedRkey());
                } else if (c.cid == 0) {
                    onServiceMsg(c, c.received(wc));
                } else {
                    throw new ProtoException(Errno.EPROTO, "SEND on IO connection " + c.cid);
                }
                if (c.gen == gen) {
                    c.repost(wc);
                }
            } catch (ProtoException e) {
                fail(e.errno(), e.getMessage());
            } catch (RdmaException e) {
                fail(e.errno(), e.getMessage());
            }
        });
    }

    /** rtrs_rdma_conn_established: the server's limits and flags; INFO_REQ once every connection is up. */
    private void onConRsp(ClientCon c, ConRsp rsp) throws ProtoException, RdmaException {
        if (rsp.errno() != 0) {
            throw new ProtoException(Errno.ECONNRESET, "accepted with errno " + rsp.errno());
        }
        int err = session.negotiated(rsp);
        if (err != 0) {
            connectFailed(err | ReconnectPolicy.DNR, "server queue depth changed to " + rsp.queueDepth()
                    + ": reconnecting stops, as in Linux, until a manual reconnect");
            return;
        }
        if (c.cid == 0) {
            newRkey = rsp.has(ConRsp.NEW_RKEY_F);
            serverExtensions = rsp.has(ConRsp.EXT_F);
            chunkSize = rsp.chunkSize();
            forNewClt = true;
            session.pathAccepted(this);
        }
        if (memMr == null) {
            memMr = pd.register(session.memory(), Access.of(Access.LOCAL_WRITE));
        }
        int qd = rsp.queueDepth();
        c.recvs = c.cid == 0
                ? new RecvPool(pd, SERVICE_RECVS, Math.max(AuthMsg.MAX_SIZE, InfoRsp.size(qd)))
                : new RecvPool(pd, qd + SPARE_RECVS, rsp.has(ConRsp.NEW_RKEY_F) ? RkeyRsp.SIZE : 0);
        c.recvs.postAll(c.qp);
        c.ready = true;
        for (ClientCon x : cons) {
            if (!x.ready) {
                return;
            }
        }
        Authenticator a = session.authenticator();
        if (serverExtensions && rsp.has(ConRsp.AUTH_F)) {
            startAuth();
        } else if (!serverExtensions && a != null && !"none".equals(a.method())) {
            connectFailed(Errno.EACCES | ReconnectPolicy.DNR, "the server does not speak this appliance's RTRS "
                    + "extensions (a Linux rnbd-server?) and cannot authenticate, but authentication (" + a.method()
                    + ") is required");
        } else {
            cons[0].send(InfoReq.SIZE, new InfoReq(session.name())::encode);
        }
    }

    private void startAuth() throws RdmaException {
        Authenticator a = session.authenticator();
        if (a == null) {
            connectFailed(Errno.ENOKEY, "server requires authentication, none configured");
            return;
        }
        try {
            auth = a.initiate(session.cfg.hostId());
            authMethod = a.method();
            byte[] out = auth.step(new byte[0]);
            AuthMsg m = AuthMsg.step(authMethod, out, false);
            cons[0].send(m.size(), m::encode);
        } catch (AuthException e) {
            connectFailed(e.errno(), "authentication: " + Errno.name(e.errno()));
        }
    }

    private void onServiceMsg(ClientCon c, ByteBuffer msg) throws ProtoException, RdmaException {
        MsgType type = MsgType.peek(msg);
        if (type == MsgType.INFO_RSP) {
            onInfoRsp(InfoRsp.decode(msg));
            return;
        }
        if (!serverExtensions) {
            throw new ProtoException(Errno.EPROTO, "unexpected " + type + " from a server without extensions");
        }
        switch (type) {
            case AUTH -> onAuth(AuthMsg.decode(msg));
            case FENCE_RSP -> session.onFenceRsp(this, FenceRsp.decode(msg));
            default -> throw new ProtoException(Errno.EPROTO, "unexpected " + type);
        }
    }

    private void onAuth(AuthMsg m) throws ProtoException, RdmaException {
        if (auth == null || sm.state() != PathState.CONNECTING) {
            throw new ProtoException(Errno.EPROTO, "AUTH out of sequence");
        }
        if (m.status() != 0) {
            connectFailed(m.status() | (m.has(AuthMsg.DNR_F) ? ReconnectPolicy.DNR : 0),
                    "server refused authentication: " + Errno.name(m.status()));
            return;
        }
        try {
            byte[] out = m.data().length == 0 && m.has(AuthMsg.FINAL_F) ? null : auth.step(m.data());
            if (m.has(AuthMsg.FINAL_F)) {
                if (!auth.done()) {
                    connectFailed(Errno.EKEYREJECTED, "server not authenticated");
                    return;
                }
                cons[0].send(InfoReq.SIZE, new InfoReq(session.name())::encode);
            } else if (out == null) {
                throw new ProtoException(Errno.EPROTO, "authentication stalled");
            } else {
                AuthMsg next = AuthMsg.step(authMethod, out, false);
                cons[0].send(next.size(), next::encode);
            }
        } catch (AuthException e) {
            connectFailed(e.errno(), "authentication: " + Errno.name(e.errno()));
        }
    }

    private void onInfoRsp(InfoRsp rsp) throws ProtoException {
        if (sm.state() != PathState.CONNECTING) {
            throw new ProtoException(Errno.EPROTO, "INFO_RSP out of sequence");
        }
        rbufs = rsp.chunks(session.queueDepth(), chunkSize).toArray(new SgDesc[0]);
        rkeys = new int[rbufs.length];
        for (int i = 0; i < rbufs.length; i++) {
            rkeys[i] = rbufs[i].key();
        }
        cancelTimer();
        if (!change(PathState.CONNECTED)) {
            return;
        }
        // A path that never connected is still connecting, not reconnecting: at boot the
        // client often comes up before the server listens, and counting that as a failed and
        // then a successful reconnect on every path would report trouble that never was.
        if (everConnected) {
            stats.reconnect(true);
        }
        everConnected = true;
        attempts = 0;
        lastError = 0;
        missedHb = 0;
        long period = session.cfg.hbIntervalMs();
        hbTask = session.timer.scheduleAtFixedRate(() -> session.locked(this::heartbeat), period, period,
                TimeUnit.MILLISECONDS);
        LOG.info("path {} of session {} connected via {}", name(), session.name(), device.name());
        session.pathConnected(this);
    }

    /**
     * An immediate: a heartbeat, its acknowledgement, or an answer. An answer with a payload
     * ({@code msg} non-null) carries its chunk's new rkey (rtrs_clt_rkey_rsp_done).
     * IO_RSP_W_INV says the server invalidated our read region, which we never ask for.
     */
    private void onImm(ClientCon c, int imm, ByteBuffer msg) throws ProtoException, RdmaException {
        switch (Imm.checkedType(imm)) {
            case Imm.HB_MSG -> cons[0].writeImmEmpty(Imm.hbAck());
            case Imm.HB_ACK -> hbRtt = session.nanos.getAsLong() - hbSentNanos;
            case Imm.IO_RSP, Imm.IO_RSP_W_INV -> {
                int id = Imm.rspMsgId(imm);
                if (msg != null) {
                    if (!newRkey) {
                        throw new ProtoException(Errno.EPROTO, "RKEY_RSP from a server without always_invalidate");
                    }
                    RkeyRsp k = RkeyRsp.decode(msg);
                    if (k.bufId() != id || id >= rkeys.length) {
                        throw new ProtoException(Errno.EPROTO, "RKEY_RSP for chunk " + k.bufId() + " in answer " + id);
                    }
                    rkeys[id] = k.rkey();
                }
                ClientRequest r = inflight.remove(id);
                if (r == null) {
                    throw new ProtoException(Errno.EPROTO, "response for unknown request " + id);
                }
                // the server is done with the read's pages: they stop being reachable before
                // the caller reads them (Linux: the server's SEND_WITH_INV or the client's
                // LOCAL_INV of the request's fast-reg MR)
                closeReadRegion(id);
                inflightCount = inflight.size();
                long lat = session.nanos.getAsLong() - r.sentNanos;
                ioLatency = ioLatency == 0 ? lat : ioLatency + (lat - ioLatency) / 8;
                stats.latency(lat);
                session.finish(r, Imm.rspErrno(imm));
            }
            default -> throw new ProtoException(Errno.EPROTO, "unexpected imm type " + Imm.type(imm));
        }
    }

    // ---- IO -------------------------------------------------------------------------

    /**
     * Under the lock: put {@code r} in flight on this path and prepare its post, which the
     * session rings after releasing the lock, copying a write's data in first. A post on the
     * soft provider transmits a whole frame from the posting thread (a 128 KiB write is tens
     * of microseconds), and completions of other IO must not wait for that behind the lock:
     * they did, at one context switch per IO on the completing thread.
     */
    void post(ClientRequest r) {
        int id = r.permit;
        int base = id * session.slotSize();
        int msgOff = r.dataLen + r.usrLen;
        ClientCon c = cons[1 + Math.floorMod(r.submitter, cons.length - 1)];
        int imm = Imm.ioReq(id, msgOff, Imm.offsetBits(session.queueDepth()));
        r.path = this;
        r.tried.add(this);
        r.sentNanos = session.nanos.getAsLong();
        inflight.put(id, r);
        inflightCount = inflight.size();
        Sge sge;
        long remote;
        if (r.write) {
            sge = new Sge(memMr, base, msgOff + RdmaWriteMsg.SIZE);
            remote = rbufs[id].addr();
        } else {
            // never NEED_INVAL: on adapters only fast-registered regions can be invalidated by a
            // peer (a SEND_WITH_INV of another fails our QP); the region is closed here instead
            List<SgDesc> target;
            try {
                target = r.dataLen == 0 ? List.of() : List.of(readTarget(id, r.dataLen));
            } catch (RdmaException e) {
                // in flight already: the failover takes it to another path
                fail(e.errno(), "cannot register a read's buffer: " + e.getMessage());
                return;
            }
            RdmaReadMsg m = new RdmaReadMsg(r.usrLen, 0, target);
            m.encode(session.memory().position(base + msgOff));
            sge = new Sge(memMr, base + r.dataLen, r.usrLen + m.size());
            remote = rbufs[id].addr() + r.dataLen;
        }
        session.ringAfterUnlock(new Post(c, r, id, base, sge, remote, rkeys[id], imm));
    }

    /**
     * One IO post, prepared under the session lock and rung after it ({@link ClientSession#ring}),
     * with the other posts to its connection that are ready then.
     */
    final class Post {
        final ClientCon con;
        private final ClientRequest r;
        private final int id;
        private final int base;
        private final Sge sge;
        private final long remote;
        private final int rkey;
        private final int imm;

        Post(ClientCon con, ClientRequest r, int id, int base, Sge sge, long remote, int rkey, int imm) {
            this.con = con;
            this.r = r;
            this.id = id;
            this.base = base;
            this.sge = sge;
            this.remote = remote;
            this.rkey = rkey;
            this.imm = imm;
        }

        /** Outside the lock: a write's data goes into its permit's buffer here. */
        SendWr prepare() {
            if (r.write) {
                r.copyData(session.memory().position(base));
            }
            return con.ioWr(sge, remote, rkey, imm);
        }

        void posted() {
            stats.io(r.write, r.dataLen);
        }

        void failed(int errno) {
            session.locked(() -> {
                if (con.gen == gen && inflight.get(id) == r) {
                    // still in flight on this connection: the failover takes it along
                    fail(errno, "cannot post IO");
                }
                // else the path already failed (or moved on) and took the request with it
            });
        }
    }

    /**
     * The read descriptor the server writes into: a new registration of the first {@code len}
     * bytes of the permit's buffer, remote-writable until {@link #closeReadRegion}.
     */
    SgDesc readTarget(int permit, int len) throws RdmaException {
        closeReadRegion(permit);
        int base = permit * session.slotSize();
        ByteBuffer pages = session.memory().duplicate().clear().position(base).limit(base + len);
        MemoryRegion mr = pd.register(pages, Access.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        readMrs.put(permit, mr);
        return new SgDesc(mr.address(), mr.rkey(), len);
    }

    /** Under the lock: the server may no longer write the read of {@code permit}. */
    private void closeReadRegion(int permit) {
        MemoryRegion mr = readMrs.remove(permit);
        if (mr != null) {
            mr.close();
        }
    }

    boolean usable() {
        return sm.state() == PathState.CONNECTED;
    }

    /**
     * Under the lock: a request in flight here has gone unanswered for longer than the
     * session's request timeout (as Linux's block layer times a request out): the path is
     * failed, so the request and its companions go to another path, fenced.
     */
    boolean timeOutStuck(long nowNanos, long timeoutNanos) {
        if (sm.state() != PathState.CONNECTED) {
            return false;
        }
        for (ClientRequest r : inflight.values()) {
            long age = nowNanos - r.sentNanos;
            if (age > timeoutNanos) {
                stats.requestTimeout();
                fail(Errno.ETIMEDOUT, "a request went unanswered for " + age / 1_000_000 + " ms");
                return true;
            }
        }
        return false;
    }

    /** Whether this path's server fences (another appliance): Linux's does not. */
    boolean serverFences() {
        return serverExtensions;
    }

    void sendFence(int fenceId, UUID failed, int failedReconCnt) {
        try {
            cons[0].send(FenceReq.SIZE, new FenceReq(fenceId, failed, failedReconCnt)::encode);
        } catch (RdmaException e) {
            fail(e.errno(), "cannot send FENCE");
        }
    }

    // ---- heartbeat and failure ------------------------------------------------------

    private void heartbeat() {
        if (sm.state() != PathState.CONNECTED) {
            return;
        }
        if (missedHb >= session.cfg.hbMissedMax()) {
            fail(Errno.ETIMEDOUT, "missed " + missedHb + " heartbeats");
            return;
        }
        missedHb++;
        hbSentNanos = session.nanos.getAsLong();
        try {
            cons[0].writeImmEmpty(Imm.hbMsg());
        } catch (RdmaException e) {
            fail(e.errno(), "heartbeat send failed");
        }
    }

    /** Under the lock: the path broke (or could not connect). */
    void fail(int status, String why) {
        PathState s = sm.state();
        if (s == PathState.CONNECTING) {
            connectFailed(status, why);
            return;
        }
        if (s != PathState.CONNECTED) {
            return;
        }
        LOG.warn("path {} of session {} failed: {} ({})", name(), session.name(), why, Errno.name(status & 0xffff));
        lastError = status & 0xffff;
        int failedReconCnt = reconCnt;
        List<ClientRequest> orphans = teardown();
        change(PathState.RECONNECTING);
        session.failover(this, failedReconCnt, orphans);
        scheduleReconnect(status);
    }

    private void connectFailed(int status, String why) {
        LOG.info("path {} of session {}: connect failed: {}", name(), session.name(), why);
        lastError = status & 0xffff;
        teardown();
        attempts++;
        if (everConnected) {
            stats.reconnect(false);
        }
        change(PathState.CONNECTING_ERR);
        session.pathConnectFailed(this);
        if (!manualStop && session.reconnectPolicy.shouldReconnect(status, attempts)) {
            change(PathState.RECONNECTING);
            scheduleReconnect(status);
        } else {
            session.pathGaveUp(this, status & 0xffff);
        }
    }

    private void scheduleReconnect(int status) {
        long delay = session.reconnectPolicy.delayMs(attempts + 1);
        cancelTimer();
        timerTask = session.timer.schedule(() -> session.locked(() -> {
            if (sm.state() == PathState.RECONNECTING && change(PathState.CONNECTING)) {
                connect();
            }
        }), delay, TimeUnit.MILLISECONDS);
    }

    /** Release every resource of the current generation; returns the requests it had in flight. */
    private List<ClientRequest> teardown() {
        gen++;
        if (hbTask != null) {
            hbTask.cancel(false);
            hbTask = null;
        }
        cancelTimer();
        // closing a queue pair waits for the provider's thread: never under the session lock
        ClientCon[] old = cons;
        ProtectionDomain oldPd = pd;
        session.closeAfterUnlock(() -> {
            for (ClientCon c : old) {
                if (c != null) {
                    c.close();
                }
            }
            if (oldPd != null) {
                oldPd.close();
            }
        });
        cons = new ClientCon[0];
        // the reads in flight here go elsewhere: the server of this path may no longer write them
        for (MemoryRegion mr : readMrs.values()) {
            mr.close();
        }
        readMrs.clear();
        pd = null;
        memMr = null;
        auth = null;
        device = null;
        List<ClientRequest> orphans = new ArrayList<>(inflight.values());
        inflight.clear();
        inflightCount = 0;
        stats.failovers(orphans.size());
        return orphans;
    }

    private void cancelTimer() {
        if (timerTask != null) {
            timerTask.cancel(false);
            timerTask = null;
        }
    }

    boolean usesDevice(RdmaDevice d) {
        return device == d;
    }

    /** Admin: drop and reconnect at once. */
    void reconnectNow() {
        manualStop = false;
        PathState s = sm.state();
        if (s == PathState.CONNECTED) {
            fail(Errno.ECONNRESET, "reconnect requested");
        }
        attempts = 0;
        if (sm.state() == PathState.CONNECTING_ERR || sm.state() == PathState.CLOSED) {
            change(PathState.RECONNECTING);
        }
        if (sm.state() == PathState.RECONNECTING) {
            cancelTimer();
            if (change(PathState.CONNECTING)) {
                connect();
            }
        }
    }

    /** Admin or close: CLOSING then CLOSED; the caller fails over what was in flight. */
    List<ClientRequest> close(boolean forever) {
        manualStop = true;
        List<ClientRequest> orphans = List.of();
        if (change(PathState.CLOSING)) {
            orphans = teardown();
            change(PathState.CLOSED);
        }
        if (forever) {
            change(PathState.DEAD);
        }
        return orphans;
    }

    RtrsClientPathInfo info() {
        RdmaDevice d = device;
        return new RtrsClientPathInfo(name(), addr.src() == null ? "" : addr.src().getHostAddress(),
                addr.dst().getHostAddress() + ":" + addr.port(), sm.state(), d == null ? "" : d.name(), attempts,
                lastError, stats.snapshot(inflightCount, hbRtt, ioLatency));
    }

    @Override
    public String toString() {
        return name();
    }
}

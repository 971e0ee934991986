package io.rnbd.rtrs.client;

import io.rnbd.rdma.api.RecvPool;
import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.Errno;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
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
 */
final class ClientPath implements PathView {
    private static final Logger LOG = LoggerFactory.getLogger(ClientPath.class);
    private static final int SERVICE_RECVS = 16;
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
    private MemoryRegion memMr;
    private ClientCon[] cons = new ClientCon[0];
    private SgDesc[] rbufs;
    private int[] rkeys;
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
        gen++;
        reconCnt = (reconCnt + 1) & 0xffff;
        device = session.devices.find(addr.src());
        if (device == null) {
            connectFailed(Errno.ENODEV, "no RDMA device for " + (addr.src() == null ? "any address" : addr.src()));
            return;
        }
        int n = 1 + session.cfg.effectiveCons();
        try {
            pd = device.allocPd();
            cons = new ClientCon[n];
            // the queue depth is known only from CON_RSP: size for the largest the device allows
            int wr = Math.min(device.attributes().maxQpWr(), 2 * Rtrs.MAX_SESS_QUEUE_DEPTH + 64);
            for (int cid = 0; cid < n; cid++) {
                ClientCon c = new ClientCon(this, gen, cid, pd);
                cons[cid] = c;
                QpInit init = new QpInit(pd, wr, wr, 1, c);
                c.qp = device.connect(addr.destination(), init, new byte[0], c);
                c.hello.postAll(c.qp);
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

    void onCmEvent(ClientCon c, CmEvent e) {
        session.locked(() -> {
            if (c.gen != gen) {
                return;
            }
            if (e.type() == CmEvent.Type.ESTABLISHED) {
                try {
                    c.send(ConReq.SIZE, new ConReq(c.cid, cons.length, reconCnt, session.uuid, uuid, c.cid == 0)::encode);
                } catch (RdmaException ex) {
                    fail(ex.errno(), "cannot send CON_REQ");
                }
                return;
            }
            fail(ClientCon.errnoOf(e), "connection " + e.detail());
        });
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
                ByteBuffer msg = c.received(wc);
                if (!c.ready) {
                    onConRsp(c, ConRsp.decode(msg));
                    return;
                }
                if (wc.hasImm()) {
                    onImm(c, wc.imm(), msg);
                } else if (c.cid == 0) {
                    onServiceMsg(c, msg);
                } else {
                    throw new ProtoException(Errno.EPROTO, "message without imm on an IO connection");
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

    private void onConRsp(ClientCon c, ConRsp rsp) throws ProtoException, RdmaException {
        if (rsp.errno() != 0) {
            connectFailed(rsp.errno() | (rsp.has(ConRsp.DNR_F) ? ReconnectPolicy.DNR : 0),
                    "server refused: " + Errno.name(rsp.errno()));
            return;
        }
        int err = session.negotiated(rsp);
        if (err != 0) {
            connectFailed(err | ReconnectPolicy.DNR, "server queue depth changed to " + rsp.queueDepth());
            return;
        }
        if (memMr == null) {
            memMr = pd.register(session.memory(), Access.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        }
        int qd = rsp.queueDepth();
        c.recvs = c.cid == 0
                ? new RecvPool(pd, SERVICE_RECVS, Math.max(AuthMsg.MAX_SIZE, InfoRsp.size(qd)))
                : new RecvPool(pd, qd + SERVICE_RECVS, RkeyRsp.SIZE);
        c.recvs.postAll(c.qp);
        c.ready = true;
        for (ClientCon x : cons) {
            if (!x.ready) {
                return;
            }
        }
        if (rsp.has(ConRsp.AUTH_F)) {
            startAuth();
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
        switch (MsgType.peek(msg)) {
            case AUTH -> onAuth(AuthMsg.decode(msg));
            case INFO_RSP -> onInfoRsp(InfoRsp.decode(msg));
            case FENCE_RSP -> session.onFenceRsp(this, FenceRsp.decode(msg));
            default -> throw new ProtoException(Errno.EPROTO, "unexpected " + MsgType.peek(msg));
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
        if (sm.state() != PathState.CONNECTING || rsp.descs().size() != session.queueDepth()) {
            throw new ProtoException(Errno.EPROTO, "INFO_RSP out of sequence or with "
                    + rsp.descs().size() + " chunks");
        }
        rbufs = rsp.descs().toArray(new SgDesc[0]);
        rkeys = new int[rbufs.length];
        for (int i = 0; i < rbufs.length; i++) {
            rkeys[i] = rbufs[i].key();
            if (rbufs[i].len() < session.maxIoSize()) {
                throw new ProtoException(Errno.EINVAL, "chunk smaller than max IO size");
            }
        }
        cancelTimer();
        if (!change(PathState.CONNECTED)) {
            return;
        }
        if (everConnected || attempts > 0) {
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

    private void onImm(ClientCon c, int imm, ByteBuffer msg) throws ProtoException, RdmaException {
        switch (Imm.checkedType(imm)) {
            case Imm.HB_MSG -> c.sendImm(Imm.hbAck());
            case Imm.HB_ACK -> hbRtt = session.nanos.getAsLong() - hbSentNanos;
            case Imm.IO_RSP, Imm.IO_RSP_W_INV -> {
                int id = Imm.rspMsgId(imm);
                ClientRequest r = inflight.remove(id);
                if (r == null) {
                    throw new ProtoException(Errno.EPROTO, "response for unknown request " + id);
                }
                if (Imm.type(imm) == Imm.IO_RSP_W_INV) {
                    RkeyRsp k = RkeyRsp.decode(msg);
                    if (k.bufId() != id) {
                        throw new ProtoException(Errno.EPROTO, "RKEY_RSP for another chunk");
                    }
                    rkeys[id] = k.rkey();
                }
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
            RdmaReadMsg m = new RdmaReadMsg(r.usrLen, 0, List.of(readTarget(id, r.dataLen)));
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

    /** The read descriptor the server writes into: this path's registration of the permit's buffer. */
    SgDesc readTarget(int permit, int len) {
        return new SgDesc(memMr.address() + (long) permit * session.slotSize(), memMr.rkey(), len);
    }

    boolean usable() {
        return sm.state() == PathState.CONNECTED;
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
            cons[0].sendImm(Imm.hbMsg());
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
        stats.reconnect(false);
        change(PathState.CONNECTING_ERR);
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

package io.rnbd.rtrs.server;

import io.rnbd.rdma.api.Access;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RecvPool;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WcOpcode;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.api.AuthExchange;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.RtrsServerPathInfo;
import io.rnbd.rtrs.proto.AuthMsg;
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

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/**
 * One path of a session: its connections (connection 0 is the service connection), its
 * registration of the session's chunks on its device, and the requests it started.
 *
 * <p>The exchange is Linux's (rtrs-srv.c): requests arrive as RDMA_WRITE_WITH_IMM into a
 * chunk, on connection 0 (the client's admin messages) or an IO connection; the answer
 * leaves on the same connection as an empty RDMA_WRITE_WITH_IMM, or, under
 * always_invalidate, a SEND_WITH_IMM carrying the chunk's new rkey; read data goes first
 * as an RDMA_WRITE, and a client that asked for NEED_INVAL gets its region invalidated by a
 * SEND_WITH_INV before the answer. Heartbeats are empty RDMA_WRITE_WITH_IMMs on connection 0.
 * A client that set {@code EXT_F} in its CON_REQ may also authenticate and FENCE, both as
 * SENDs on connection 0, where this side posts receive buffers large enough for them.
 *
 * <p>A path leaves its session only once closed AND drained (no request of it still in
 * the upper layer). Until then a reconnect of the same path is refused with EBUSY, and a
 * FENCE for it waits: that is the server half of the failover ordering rule.
 */
final class ServerPath {
    private static final Logger LOG = LoggerFactory.getLogger(ServerPath.class);
    /** Receives on connection 0: INFO_REQ, the extensions' messages, heartbeats and the client's admin IO. */
    static final int SERVICE_RECVS = 64;
    static final int SERVICE_SLOT = Math.max(AuthMsg.MAX_SIZE, InfoReq.SIZE);
    /** Beyond one per chunk on an IO connection, for what arrives while answers are reposted. */
    static final int SPARE_RECVS = 16;
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    enum State { CONNECTING, CONNECTED, CLOSING, CLOSED }

    /** Linux's rtrs_srv_change_state: the only moves there are. */
    private static final Map<State, Set<State>> MOVES = Map.of(
            State.CONNECTING, EnumSet.of(State.CONNECTED, State.CLOSING),
            State.CONNECTED, EnumSet.of(State.CLOSING),
            State.CLOSING, EnumSet.of(State.CLOSED),
            State.CLOSED, EnumSet.noneOf(State.class));

    final ServerSession session;
    final UUID uuid;
    final int reconCnt;
    final DeviceContext dev;
    /** The client speaks this appliance's extensions (ConReq.EXT_F): authentication, FENCE. */
    final boolean extensions;
    final InetAddress localAddr;
    final InetAddress remoteAddr;
    private final ServerCon[] cons;
    private final ServerConfig cfg;
    private final int offBits;
    private final MemoryRegion[] chunkMrs;
    private final MemoryRegion rspMr;
    private State state = State.CONNECTING;
    private int inflight;
    private int dropped;
    private boolean authenticated;
    private AuthExchange auth;
    private String authMethod;
    /** What this path's authentication established: the host id, whether proven, by which method. */
    private String peerHostId = "";
    private boolean peerProven;
    private int missedHb;
    private ScheduledFuture<?> hbTask;
    private final ScheduledFuture<?> deadline;
    private boolean resourcesReleased;
    private final List<IntConsumer> onDrained = new ArrayList<>();

    ServerPath(ServerSession session, UUID uuid, int reconCnt, int cidNum, boolean extensions, InetAddress localAddr,
               InetAddress remoteAddr, DeviceContext dev, ServerConfig cfg) throws RdmaException {
        this.session = session;
        this.uuid = uuid;
        this.reconCnt = reconCnt;
        this.extensions = extensions;
        this.localAddr = localAddr;
        this.remoteAddr = remoteAddr;
        this.dev = dev;
        this.cfg = cfg;
        this.cons = new ServerCon[cidNum];
        this.offBits = Imm.offsetBits(cfg.queueDepth());
        this.chunkMrs = new MemoryRegion[cfg.queueDepth()];
        this.rspMr = dev.pd.register(ByteBuffer.allocateDirect(cfg.queueDepth() * RkeyRsp.SIZE),
                Access.of(Access.LOCAL_WRITE));
        // A path that never finishes its handshake (CON_REQ accepted; authentication or
        // INFO_REQ never come) is closed at the deadline, so it holds nothing for long.
        this.deadline = session.server.timer().schedule(this::handshakeDeadline, cfg.handshakeTimeoutMs(),
                TimeUnit.MILLISECONDS);
    }

    /**
     * Under the lock, at INFO_REQ (after authentication): register the session's chunks on
     * this path's device. Not at the connect request: an unauthenticated client must not make
     * the server allocate and register chunk memory.
     */
    private void registerChunks() throws RdmaException {
        ByteBuffer[] chunks = session.chunks();
        try {
            for (int i = 0; i < chunkMrs.length; i++) {
                chunkMrs[i] = dev.pd.register(chunks[i].duplicate().clear(),
                        Access.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
            }
        } catch (RdmaException e) {
            for (int i = 0; i < chunkMrs.length; i++) {
                if (chunkMrs[i] != null) {
                    chunkMrs[i].close();
                    chunkMrs[i] = null;
                }
            }
            throw e;
        }
    }

    private void handshakeDeadline() {
        synchronized (session) {
            if (state == State.CONNECTING) {
                int up = 0;
                for (ServerCon c : cons) {
                    if (c != null) {
                        up++;
                    }
                }
                String step = up < cons.length ? up + " of " + cons.length + " connections up"
                        : extensions && auth != null && !authenticated ? "authentication (" + authMethod + ") unfinished"
                        : "no INFO_REQ";
                LOG.warn("closing path {} ({}) of {}: handshake not finished within {} ms (handshake.timeout.ms): {}",
                        remoteAddr.getHostAddress(), uuid, session, cfg.handshakeTimeoutMs(), step);
                session.server.handshakeTimedOut();
                failLocked(Errno.ETIMEDOUT, "handshake timeout");
            }
        }
        session.runClosers();
    }

    boolean connected() {
        return state == State.CONNECTED;
    }

    boolean connecting() {
        return state == State.CONNECTING;
    }

    boolean closingOrClosed() {
        return state == State.CLOSING || state == State.CLOSED;
    }

    int cidNum() {
        return cons.length;
    }

    /** Under the session lock: the one place the state changes; false (and no change) for a move Linux does not make. */
    private boolean changeState(State to) {
        if (!MOVES.get(state).contains(to)) {
            return false;
        }
        LOG.debug("path {} of {}: {} -> {}", uuid, session, state, to);
        if (state == State.CONNECTING) {
            session.server.handshakeEnded(remoteAddr);
        }
        state = to;
        return true;
    }

    /**
     * Under the session lock: reserve connection {@code cid} with its receive buffers; null if
     * the slot is taken or the path no longer connecting (Linux: "Connection already exists",
     * "Session in wrong state").
     */
    ServerCon attach(int cid) throws RdmaException {
        if (state != State.CONNECTING || cons[cid] != null) {
            return null;
        }
        RecvPool pool = cid == 0 ? new RecvPool(dev.pd, SERVICE_RECVS, SERVICE_SLOT)
                : new RecvPool(dev.pd, cfg.queueDepth() + SPARE_RECVS, 0);
        ServerCon con = new ServerCon(session.server, dev, this, cid, pool);
        cons[cid] = con;
        dev.cons.add(con);
        return con;
    }

    /** Handles one receive; returns whether the buffer should be posted again. */
    boolean onRecv(ServerCon con, WorkCompletion wc, ByteBuffer msg) {
        ServerRequest start = null;
        synchronized (session) {
            if (closingOrClosed()) {
                dropped++;
                return false;
            }
            missedHb = 0;
            try {
                if (wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM) {
                    switch (Imm.checkedType(wc.imm())) {
                        case Imm.IO_REQ -> start = onIoReq(con, wc.imm());
                        case Imm.HB_MSG -> cons[0].writeImmEmpty(Imm.hbAck());
                        case Imm.HB_ACK -> { }
                        default -> throw new ProtoException(Errno.EPROTO, "unexpected imm type " + Imm.type(wc.imm()));
                    }
                } else if (con.cid == 0 && !wc.hasImm()) {
                    onServiceMsg(con, msg);
                } else {
                    throw new ProtoException(Errno.EPROTO, "unexpected " + (wc.hasImm() ? "SEND_WITH_IMM" : "SEND")
                            + " on connection " + con.cid);
                }
            } catch (ProtoException e) {
                failLocked(e.errno(), e.getMessage());
            } catch (RdmaException e) {
                failLocked(e.errno(), e.getMessage());
            }
        }
        session.runClosers();
        if (start != null) {
            session.server.dispatch(start);
        }
        return !closingOrClosed();
    }

    private void onServiceMsg(ServerCon con, ByteBuffer msg) throws ProtoException, RdmaException {
        MsgType type = MsgType.peek(msg);
        if (type == MsgType.INFO_REQ) {
            onInfoReq(con, InfoReq.decode(msg));
            return;
        }
        if (!extensions) {
            // Linux's server knows no other service message; neither does a Linux client send one
            throw new ProtoException(Errno.EPROTO, "unexpected " + type + " from a client without extensions");
        }
        switch (type) {
            case AUTH -> onAuth(con, AuthMsg.decode(msg));
            case FENCE_REQ -> onFenceReq(con, FenceReq.decode(msg));
            default -> throw new ProtoException(Errno.EPROTO, "unexpected " + type + " on connection 0");
        }
    }

    private void onAuth(ServerCon con, AuthMsg m) throws ProtoException {
        if (state != State.CONNECTING || authenticated) {
            throw new ProtoException(Errno.EPROTO, "AUTH out of sequence");
        }
        if (m.status() != 0) {
            throw new ProtoException(m.status(), "client aborted authentication");
        }
        if (auth == null) {
            Authenticator a = session.server.authenticator();
            if (a == null) {
                throw new ProtoException(Errno.EPROTO, "AUTH while authentication is off");
            }
            if (!a.method().equals(m.method())) {
                refuseAuth(con, m.method(), Errno.EPROTONOSUPPORT);
                return;
            }
            auth = a.respond();
            authMethod = a.method();
        }
        try {
            byte[] out = auth.step(m.data());
            if (auth.done()) {
                authenticated = true;
                peerHostId = auth.peerId();
                peerProven = auth.peerIdProven();
                con.send(AuthMsg.HEADER_SIZE + (out == null ? 0 : out.length),
                        AuthMsg.step(authMethod, out, true)::encode, null);
            } else if (out == null) {
                refuseAuth(con, authMethod, Errno.EKEYREJECTED);
            } else {
                con.send(AuthMsg.HEADER_SIZE + out.length, AuthMsg.step(authMethod, out, false)::encode, null);
            }
        } catch (AuthException e) {
            LOG.warn("authentication of path {} failed: {}", uuid, Errno.name(e.errno()));
            refuseAuth(con, authMethod, e.errno());
        }
    }

    private void refuseAuth(ServerCon con, String method, int errno) {
        // Do-not-retry only where a retry cannot succeed (no key, wrong key, a method the
        // client does not speak); EAGAIN (the configured method's bundle is not running yet)
        // must let the client come back.
        boolean dnr = errno != Errno.EAGAIN;
        AuthMsg f = AuthMsg.failure(method.length() > AuthMsg.METHOD_MAX ? "" : method, errno, dnr);
        con.send(f.size(), f::encode, () -> fail(errno, "authentication failed"));
    }

    /** process_info_req: names the session, answers with the chunks, starts heartbeats. */
    private void onInfoReq(ServerCon con, InfoReq req) throws ProtoException {
        if (state != State.CONNECTING) {
            throw new ProtoException(Errno.EPROTO, "INFO_REQ out of sequence");
        }
        if (extensions && session.server.authenticator() != null && !authenticated) {
            throw new ProtoException(Errno.EACCES, "INFO_REQ before authentication");
        }
        for (ServerCon c : cons) {
            if (c == null) {
                throw new ProtoException(Errno.EPROTO, "INFO_REQ before all connections are up");
            }
        }
        String name = req.pathName();
        if (name.indexOf('/') >= 0 || name.indexOf('.') >= 0) {
            throw new ProtoException(Errno.EINVAL, "session name " + name + " contains / or .");
        }
        if (session.server.nameTakenElsewhere(name, session)) {
            throw new ProtoException(Errno.EPERM, "session name " + name + " is another session's");
        }
        if (!session.name().isEmpty() && !session.name().equals(name)) {
            throw new ProtoException(Errno.EINVAL, "path names another session");
        }
        String identityProblem = session.bindIdentity(peerHostId, authenticated && peerProven,
                authenticated ? authMethod : "");
        if (identityProblem != null) {
            LOG.warn("refusing path {} ({}) of session {}: {}", remoteAddr.getHostAddress(), uuid, name,
                    identityProblem);
            throw new ProtoException(Errno.EACCES, identityProblem);
        }
        if (session.name().isEmpty()) {
            session.name(name);
        }
        try {
            registerChunks();
        } catch (RdmaException e) {
            throw new ProtoException(e.errno(), "cannot register the chunks: " + e.getMessage());
        }
        deadline.cancel(false);
        List<SgDesc> descs = new ArrayList<>(chunkMrs.length);
        for (MemoryRegion mr : chunkMrs) {
            descs.add(new SgDesc(mr.address(), mr.rkey(), mr.length()));
        }
        InfoRsp rsp = new InfoRsp(descs);
        changeState(State.CONNECTED);
        con.send(rsp.size(), rsp::encode, null);
        long period = cfg.hbIntervalMs();
        hbTask = session.server.timer().scheduleAtFixedRate(this::heartbeat, period, period, TimeUnit.MILLISECONDS);
        LOG.info("path {} ({}) of session {} connected, host id {}{}", remoteAddr.getHostAddress(), uuid, name,
                describeIdentity(),
                extensions ? "" : " (a client without this appliance's extensions, e.g. Linux: no authentication, no fencing)");
        session.server.pathConnected(this);
    }

    private String describeIdentity() {
        if (!authenticated) {
            return "none (not authenticated)";
        }
        return "'" + peerHostId + "' " + (peerProven ? "proven by " : "claimed through ") + authMethod;
    }

    private void onFenceReq(ServerCon con, FenceReq req) {
        ServerPath target = session.paths.get(req.pathUuid());
        int waitedFor = target == null ? 0 : target.inflight;
        IntConsumer answer = dropped -> {
            FenceRsp rsp = new FenceRsp(req.fenceId(), 0, waitedFor, dropped);
            con.send(FenceRsp.SIZE, rsp::encode, null);
        };
        if (target == null || target.reconCnt != req.reconCnt()) {
            // that instance already drained: a newer one is only admitted after it
            answer.accept(0);
            return;
        }
        if (target == this) {
            FenceRsp rsp = new FenceRsp(req.fenceId(), Errno.EINVAL, 0, 0);
            con.send(FenceRsp.SIZE, rsp::encode, null);
            return;
        }
        LOG.info("fencing path {} of {} ({} requests in flight)", target.uuid, session, target.inflight);
        target.onDrained.add(answer);
        target.failLocked(Errno.ECANCELED, "fenced");
    }

    private ServerRequest onIoReq(ServerCon con, int imm) throws ProtoException, RdmaException {
        if (state != State.CONNECTED) {
            throw new ProtoException(Errno.EPROTO, "IO before INFO_REQ");
        }
        int bufId = Imm.reqBufId(imm, offBits);
        int off = Imm.reqOffset(imm, offBits);
        if (bufId >= chunkMrs.length || off >= cfg.chunkSize()) {
            throw new ProtoException(Errno.EINVAL, "wrong msg_id " + bufId + ", off " + off);
        }
        if (session.chunkBusy[bufId]) {
            throw new ProtoException(Errno.EBUSY, "chunk " + bufId + " reused while in flight");
        }
        session.chunkBusy[bufId] = true;
        if (cfg.alwaysInvalidate()) {
            chunkMrs[bufId].invalidate();
        }
        inflight++;
        ByteBuffer chunk = session.chunks()[bufId].duplicate().clear().order(ByteOrder.LITTLE_ENDIAN);
        ServerRequest r;
        try {
            r = parse(con, bufId, off, chunk);
        } catch (ProtoException e) {
            // Linux closes the path on a message it cannot read; an answer with the errno is
            // kinder, and the chunk is as free either way
            r = new ServerRequest(this, con, bufId, false, EMPTY, EMPTY, null, false).refused(e.errno());
        }
        if (r.error != 0) {
            session.stats.rejected();
            LOG.debug("bad IO from path {}: {}", uuid, Errno.name(r.error));
            respond(r, r.error);
            return null;
        }
        return r;
    }

    /**
     * The request at {@code off} in the chunk (process_io_req): a WRITE's data is
     * {@code [0, off - usr_len)}, a READ's destination its one descriptor (or none, for a
     * read without data). What cannot be served becomes a request that only carries the
     * error, so that it is answered as Linux answers it (an IO_RSP with the errno, and the
     * client's region invalidated if it asked).
     */
    private ServerRequest parse(ServerCon con, int bufId, int off, ByteBuffer chunk) throws ProtoException {
        if (off > chunk.capacity() - 2) {
            throw new ProtoException(Errno.EINVAL, "message offset " + off + " outside the chunk");
        }
        ByteBuffer at = chunk.duplicate().position(off);
        MsgType type = MsgType.peek(at);
        if (type == MsgType.RDMA_WRITE) {
            int usrLen = RdmaWriteMsg.decode(at).usrLen();
            int dataLen = off - usrLen;
            ServerRequest r = new ServerRequest(this, con, bufId, true, safeSlice(chunk, Math.max(dataLen, 0), usrLen),
                    chunk.slice(0, Math.max(dataLen, 0)), null, false);
            if (usrLen > off || usrLen > Rtrs.MAX_HDR_SIZE) {
                return r.refused(Errno.EMSGSIZE);
            }
            if (dataLen > cfg.maxIoSize()) {
                return r.refused(Errno.EMSGSIZE);
            }
            session.stats.started(true, dataLen);
            return r;
        }
        if (type == MsgType.RDMA_READ) {
            RdmaReadMsg m = RdmaReadMsg.decode(at);
            int usrLen = m.usrLen();
            int dataLen = off - usrLen;
            SgDesc d = m.descs().isEmpty() ? null : m.descs().get(0);
            boolean needInval = m.has(RdmaReadMsg.NEED_INVAL_F) && d != null;
            ServerRequest r = new ServerRequest(this, con, bufId, false, safeSlice(chunk, Math.max(dataLen, 0), usrLen),
                    chunk.slice(0, Math.max(dataLen, 0)), d, needInval);
            if (usrLen > off || usrLen > Rtrs.MAX_HDR_SIZE) {
                return r.refused(Errno.EMSGSIZE);
            }
            if (m.descs().size() > 1) {
                // Linux's server answers nothing to that; an answer with the error is kinder
                return r.refused(Errno.EINVAL);
            }
            if (d != null && (d.len() == 0 || d.len() > dataLen || d.len() > cfg.maxIoSize())) {
                return r.refused(Errno.EMSGSIZE);
            }
            session.stats.started(false, dataLen);
            return r;
        }
        throw new ProtoException(Errno.EPROTO, "IO message of type " + type);
    }

    private static ByteBuffer safeSlice(ByteBuffer chunk, int from, int len) {
        int f = Math.min(from, chunk.capacity());
        return chunk.slice(f, Math.min(len, chunk.capacity() - f));
    }

    /** The upper layer finished {@code r}: answer the client unless the path went away meanwhile. */
    void complete(ServerRequest r, int errno) {
        synchronized (session) {
            session.stats.finished();
            if (state != State.CONNECTED) {
                inflight--;
                session.chunkBusy[r.bufId] = false;
                maybeDrained();
                return;
            }
            try {
                respond(r, errno);
            } catch (RdmaException e) {
                failLocked(e.errno(), "cannot answer: " + e.getMessage());
            }
        }
        session.runClosers();
    }

    /**
     * Under the lock: the answer, as one chain (rdma_write_sg / send_io_resp_imm): the read
     * data, the SEND_WITH_INV the client asked for, then the IO_RSP: an empty
     * RDMA_WRITE_WITH_IMM, or under always_invalidate a SEND_WITH_IMM with the chunk's new
     * rkey. The chunk is free again once it is posted.
     */
    private void respond(ServerRequest r, int errno) throws RdmaException {
        inflight--;
        session.chunkBusy[r.bufId] = false;
        ServerCon con = r.con;
        List<SendWr> chain = new ArrayList<>(3);
        if (!r.write && errno == 0 && r.readDst != null) {
            SgDesc d = r.readDst;
            chain.add(con.dataWrite(new Sge(chunkMrs[r.bufId], 0, d.len()), d.addr(), d.key()));
        }
        if (r.needInval) {
            chain.add(con.invalidate(r.readDst.key()));
        }
        int imm = Imm.ioRsp(r.bufId, errno, r.needInval);
        if (cfg.alwaysInvalidate()) {
            int rkey = chunkMrs[r.bufId].reregister();
            ByteBuffer slot = rspMr.buffer().duplicate().position(r.bufId * RkeyRsp.SIZE);
            new RkeyRsp(r.bufId, rkey).encode(slot);
            chain.add(con.rkeyResponse(imm, rspMr, r.bufId * RkeyRsp.SIZE, RkeyRsp.SIZE));
        } else {
            chain.add(con.emptyWriteImm(imm));
        }
        con.post(chain);
    }

    private void heartbeat() {
        synchronized (session) {
            heartbeatLocked();
        }
        session.runClosers();
    }

    private void heartbeatLocked() {
        if (state != State.CONNECTED) {
            return;
        }
        if (missedHb >= cfg.hbMissedMax()) {
            failLocked(Errno.ETIMEDOUT, "missed " + missedHb + " heartbeats");
            return;
        }
        missedHb++;
        try {
            cons[0].writeImmEmpty(Imm.hbMsg());
        } catch (RdmaException e) {
            failLocked(e.errno(), "heartbeat send failed");
        }
    }

    void fail(int errno, String why) {
        synchronized (session) {
            failLocked(errno, why);
        }
        session.runClosers();
    }

    /** Close the connections; the path leaves the session once its started requests are done. */
    void failLocked(int errno, String why) {
        if (!changeState(State.CLOSING)) {
            return;
        }
        LOG.info("closing path {} of {}: {} ({})", uuid, session, why, Errno.name(errno));
        if (hbTask != null) {
            hbTask.cancel(false);
        }
        deadline.cancel(false);
        for (ServerCon c : cons) {
            if (c != null) {
                c.disconnect();
            }
        }
        maybeDrained();
    }

    /** Device going away: give back everything of the device now, drain later. */
    void releaseResources() {
        synchronized (session) {
            failLocked(Errno.ENODEV, "device removed");
            release();
        }
        session.runClosers();
    }

    private void release() {
        if (resourcesReleased) {
            return;
        }
        resourcesReleased = true;
        ServerCon[] cs = cons.clone();
        session.closeAfterUnlock(() -> {
            for (ServerCon c : cs) {
                if (c != null) {
                    c.close();
                }
            }
            for (MemoryRegion mr : chunkMrs) {
                if (mr != null) {
                    mr.close();
                }
            }
            rspMr.close();
        });
    }

    private void maybeDrained() {
        if (state != State.CLOSING || inflight > 0) {
            return;
        }
        changeState(State.CLOSED);
        release();
        session.server.pathGone(this);
        for (IntConsumer c : onDrained) {
            c.accept(dropped);
        }
        onDrained.clear();
    }

    RtrsServerPathInfo info() {
        ServerCon c0 = cons[0];
        String local = c0 == null || c0.qp() == null ? "" : hostPort(c0.qp().localAddress());
        String remote = c0 == null || c0.qp() == null ? "" : hostPort(c0.qp().remoteAddress());
        int n = 0;
        for (ServerCon c : cons) {
            if (c != null) {
                n++;
            }
        }
        return new RtrsServerPathInfo(uuid, dev.device.name(), local, remote, n, inflight);
    }

    /** "127.0.0.1:1234", as the console shows addresses (InetSocketAddress prints "/127.0.0.1:1234"). */
    private static String hostPort(java.net.InetSocketAddress a) {
        return a == null ? "" : a.getAddress().getHostAddress() + ":" + a.getPort();
    }
}

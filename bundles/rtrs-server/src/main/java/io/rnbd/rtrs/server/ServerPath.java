package io.rnbd.rtrs.server;

import io.rnbd.rdma.api.RecvPool;
import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.Errno;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.Sge;
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

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/**
 * One path of a session: its connections (connection 0 is the service connection), its
 * registration of the session's chunks on its device, and the requests it started.
 *
 * <p>A path leaves its session only once closed AND drained (no request of it still in
 * the upper layer). Until then a reconnect of the same path is refused with EBUSY, and a
 * FENCE for it waits: that is the server half of the failover ordering rule.
 */
final class ServerPath {
    private static final Logger LOG = LoggerFactory.getLogger(ServerPath.class);
    private static final int SERVICE_RECVS = 16;

    enum State { CONNECTING, CONNECTED, CLOSING, CLOSED }

    final ServerSession session;
    final UUID uuid;
    final int reconCnt;
    final DeviceContext dev;
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
    private int missedHb;
    private ScheduledFuture<?> hbTask;
    private boolean resourcesReleased;
    private final List<IntConsumer> onDrained = new ArrayList<>();

    ServerPath(ServerSession session, UUID uuid, int reconCnt, int cidNum, DeviceContext dev, ServerConfig cfg)
            throws RdmaException {
        this.session = session;
        this.uuid = uuid;
        this.reconCnt = reconCnt;
        this.dev = dev;
        this.cfg = cfg;
        this.cons = new ServerCon[cidNum];
        this.offBits = Imm.offsetBits(cfg.queueDepth());
        this.chunkMrs = new MemoryRegion[cfg.queueDepth()];
        MemoryRegion rsp = null;
        try {
            for (int i = 0; i < chunkMrs.length; i++) {
                chunkMrs[i] = dev.pd.register(session.chunks[i].duplicate().clear(),
                        Access.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
            }
            rsp = dev.pd.register(ByteBuffer.allocateDirect(cfg.queueDepth() * RkeyRsp.SIZE),
                    Access.of(Access.LOCAL_WRITE));
        } catch (RdmaException e) {
            for (MemoryRegion mr : chunkMrs) {
                if (mr != null) {
                    mr.close();
                }
            }
            throw e;
        }
        this.rspMr = rsp;
    }

    boolean connected() {
        return state == State.CONNECTED;
    }

    /** Under the session lock: attach connection {@code cid}; false if the slot is taken or the path is not connecting. */
    boolean attach(ServerCon con, int cid) throws RdmaException {
        if (state != State.CONNECTING || cons[cid] != null) {
            return false;
        }
        cons[cid] = con;
        con.cid = cid;
        con.path = this;
        int qd = cfg.queueDepth();
        con.useRecvs(cid == 0 ? new RecvPool(dev.pd, SERVICE_RECVS, AuthMsg.MAX_SIZE)
                : new RecvPool(dev.pd, qd + SERVICE_RECVS, 0));
        return true;
    }

    /** Handles one receive; returns whether the buffer should be posted again. */
    boolean onRecv(ServerCon con, WorkCompletion wc, ByteBuffer msg) {
        ServerRequest start = null;
        synchronized (session) {
            if (state == State.CLOSING || state == State.CLOSED) {
                dropped++;
                return false;
            }
            missedHb = 0;
            try {
                if (wc.hasImm()) {
                    switch (Imm.checkedType(wc.imm())) {
                        case Imm.IO_REQ -> start = onIoReq(con, wc.imm());
                        case Imm.HB_MSG -> con.sendImm(Imm.hbAck(), null, 0, 0);
                        case Imm.HB_ACK -> { }
                        default -> throw new ProtoException(Errno.EPROTO, "unexpected imm type " + Imm.type(wc.imm()));
                    }
                } else if (con.cid == 0) {
                    onServiceMsg(con, msg);
                } else {
                    throw new ProtoException(Errno.EPROTO, "message without imm on an IO connection");
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
        return state == State.CONNECTING || state == State.CONNECTED;
    }

    private void onServiceMsg(ServerCon con, ByteBuffer msg) throws ProtoException, RdmaException {
        switch (MsgType.peek(msg)) {
            case AUTH -> onAuth(con, AuthMsg.decode(msg));
            case INFO_REQ -> onInfoReq(con, InfoReq.decode(msg));
            case FENCE_REQ -> onFenceReq(con, FenceReq.decode(msg));
            default -> throw new ProtoException(Errno.EPROTO, "unexpected " + MsgType.peek(msg) + " on connection 0");
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
                session.hostId(auth.peerId());
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

    private void onInfoReq(ServerCon con, InfoReq req) throws ProtoException {
        if (state != State.CONNECTING) {
            throw new ProtoException(Errno.EPROTO, "INFO_REQ out of sequence");
        }
        if (session.server.authenticator() != null && !authenticated) {
            throw new ProtoException(Errno.EACCES, "INFO_REQ before authentication");
        }
        for (ServerCon c : cons) {
            if (c == null) {
                throw new ProtoException(Errno.EPROTO, "INFO_REQ before all connections are up");
            }
        }
        if (session.name().isEmpty()) {
            session.name(req.pathName());
        } else if (!session.name().equals(req.pathName())) {
            throw new ProtoException(Errno.EINVAL, "path names another session");
        }
        List<SgDesc> descs = new ArrayList<>(chunkMrs.length);
        for (MemoryRegion mr : chunkMrs) {
            descs.add(new SgDesc(mr.address(), mr.rkey(), mr.length()));
        }
        InfoRsp rsp = new InfoRsp(descs);
        state = State.CONNECTED;
        con.send(rsp.size(), rsp::encode, null);
        long period = cfg.hbIntervalMs();
        hbTask = session.server.timer().scheduleAtFixedRate(this::heartbeat, period, period, TimeUnit.MILLISECONDS);
        session.server.pathConnected(this);
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
        if (bufId >= chunkMrs.length) {
            throw new ProtoException(Errno.EINVAL, "buffer id " + bufId + " beyond queue depth");
        }
        if (session.chunkBusy[bufId]) {
            throw new ProtoException(Errno.EBUSY, "chunk " + bufId + " reused while in flight");
        }
        session.chunkBusy[bufId] = true;
        if (cfg.alwaysInvalidate()) {
            chunkMrs[bufId].invalidate();
        }
        inflight++;
        ByteBuffer chunk = session.chunks[bufId].duplicate().clear().order(ByteOrder.LITTLE_ENDIAN);
        try {
            return parse(con, bufId, off, chunk);
        } catch (ProtoException e) {
            session.stats.rejected();
            LOG.debug("bad IO from path {}: {}", uuid, e.getMessage());
            respond(con, bufId, e.errno());
            return null;
        }
    }

    private ServerRequest parse(ServerCon con, int bufId, int off, ByteBuffer chunk) throws ProtoException {
        if (off > chunk.capacity() - 2) {
            throw new ProtoException(Errno.EINVAL, "message offset " + off + " outside the chunk");
        }
        ByteBuffer at = chunk.duplicate().position(off);
        MsgType type = MsgType.peek(at);
        if (type == MsgType.RDMA_WRITE) {
            int usrLen = RdmaWriteMsg.decode(at).usrLen();
            checkHdr(usrLen, off);
            int dataLen = off - usrLen;
            if (dataLen > cfg.maxIoSize()) {
                throw new ProtoException(Errno.EMSGSIZE, "write of " + dataLen + " bytes");
            }
            session.stats.started(true, dataLen);
            return new ServerRequest(this, con, bufId, true, chunk.slice(dataLen, usrLen), chunk.slice(0, dataLen), null);
        }
        if (type == MsgType.RDMA_READ) {
            RdmaReadMsg m = RdmaReadMsg.decode(at);
            checkHdr(m.usrLen(), off);
            if (m.descs().size() != 1) {
                throw new ProtoException(Errno.EINVAL, "read with " + m.descs().size() + " segments");
            }
            SgDesc d = m.descs().get(0);
            if (d.len() > cfg.maxIoSize() || d.len() > off - m.usrLen()) {
                throw new ProtoException(Errno.EMSGSIZE, "read of " + d.len() + " bytes");
            }
            session.stats.started(false, d.len());
            return new ServerRequest(this, con, bufId, false, chunk.slice(off - m.usrLen(), m.usrLen()),
                    chunk.slice(0, d.len()), d);
        }
        throw new ProtoException(Errno.EPROTO, "IO message of type " + type);
    }

    private void checkHdr(int usrLen, int off) throws ProtoException {
        if (usrLen > Rtrs.MAX_HDR_SIZE || usrLen > off) {
            throw new ProtoException(Errno.EMSGSIZE, "user header of " + usrLen + " bytes");
        }
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
                if (!r.write && errno == 0 && r.dataLength() > 0) {
                    SgDesc d = r.readDst;
                    r.con.writeData(new Sge(chunkMrs[r.bufId], 0, r.dataLength()), d.addr(), d.key());
                }
                respond(r.con, r.bufId, errno);
            } catch (RdmaException e) {
                failLocked(e.errno(), "cannot answer: " + e.getMessage());
            }
        }
        session.runClosers();
    }

    /** Under the lock: IO_RSP (with the chunk's new rkey under always_invalidate), freeing the chunk. */
    private void respond(ServerCon con, int bufId, int errno) throws RdmaException {
        inflight--;
        session.chunkBusy[bufId] = false;
        if (cfg.alwaysInvalidate()) {
            int rkey = chunkMrs[bufId].reregister();
            ByteBuffer slot = rspMr.buffer().duplicate().position(bufId * RkeyRsp.SIZE);
            new RkeyRsp(bufId, rkey).encode(slot);
            con.sendImm(Imm.ioRsp(bufId, errno, true), rspMr, bufId * RkeyRsp.SIZE, RkeyRsp.SIZE);
        } else {
            con.sendImm(Imm.ioRsp(bufId, errno, false), null, 0, 0);
        }
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
            cons[0].sendImm(Imm.hbMsg(), null, 0, 0);
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
    private void failLocked(int errno, String why) {
        if (state == State.CLOSING || state == State.CLOSED) {
            return;
        }
        LOG.info("closing path {} of {}: {} ({})", uuid, session, why, Errno.name(errno));
        state = State.CLOSING;
        if (hbTask != null) {
            hbTask.cancel(false);
        }
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
                mr.close();
            }
            rspMr.close();
        });
    }

    private void maybeDrained() {
        if (state != State.CLOSING || inflight > 0) {
            return;
        }
        state = State.CLOSED;
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

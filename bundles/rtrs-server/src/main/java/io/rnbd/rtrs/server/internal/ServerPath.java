package io.rnbd.rtrs.server.internal;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RecvPool;
import io.rnbd.rdma.api.WcOpcode;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rtrs.api.RtrsServerPathInfo;
import io.rnbd.rtrs.core.Heartbeat;
import io.rnbd.rtrs.proto.AuthMsg;
import io.rnbd.rtrs.proto.FenceReq;
import io.rnbd.rtrs.proto.FenceRsp;
import io.rnbd.rtrs.proto.Imm;
import io.rnbd.rtrs.proto.InfoReq;
import io.rnbd.rtrs.proto.MsgType;
import io.rnbd.rtrs.proto.ProtoException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.IntConsumer;

/**
 * One path of a session: its connections (connection 0 is the service connection), its
 * state, and how it closes and drains. Its handshake ({@link ServerHandshake}), its IO
 * ({@link ServerIo}) and its heartbeats (rtrs-core's {@link Heartbeat}, the client's too) each
 * have a class of their own; all of them run under the session's lock and reach the session
 * only through {@link PathSession}.
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

    final PathSession session;
    final UUID uuid;
    final int reconCnt;
    final DeviceContext dev;
    /** The client speaks this appliance's extensions (ConReq.EXT_F): authentication, FENCE. */
    final boolean extensions;
    final InetAddress localAddr;
    final InetAddress remoteAddr;
    final ServerIo io;
    final Heartbeat heartbeat;
    private final ServerHandshake handshake;
    private final ServerCon[] cons;
    private ServerPathState state = ServerPathState.CONNECTING;
    private int dropped;
    private boolean resourcesReleased;
    private final List<IntConsumer> onDrained = new ArrayList<>();

    ServerPath(PathSession session, UUID uuid, int reconCnt, int cidNum, boolean extensions, InetAddress localAddr,
               InetAddress remoteAddr, DeviceContext dev) throws RdmaException {
        ServerConfig cfg = session.cfg();
        this.session = session;
        this.uuid = uuid;
        this.reconCnt = reconCnt;
        this.extensions = extensions;
        this.localAddr = localAddr;
        this.remoteAddr = remoteAddr;
        this.dev = dev;
        this.cons = new ServerCon[cidNum];
        this.io = new ServerIo(this, dev, cfg);
        this.heartbeat = new Heartbeat(new Heartbeat.Path() {
            @Override
            public boolean connected() {
                return ServerPath.this.connected();
            }

            @Override
            public void writeImmEmpty(int imm) throws RdmaException {
                service().writeImmEmpty(imm);
            }

            @Override
            public void fail(int errno, String why) {
                failLocked(errno, why);
            }
        }, session, cfg.hbIntervalMs(), cfg.hbMissedMax());
        // last: it arms the handshake's deadline
        this.handshake = new ServerHandshake(this, cfg);
    }

    boolean connected() {
        return state == ServerPathState.CONNECTED;
    }

    boolean connecting() {
        return state == ServerPathState.CONNECTING;
    }

    boolean closingOrClosed() {
        return state == ServerPathState.CLOSING || state == ServerPathState.CLOSED;
    }

    int cidNum() {
        return cons.length;
    }

    /** Under the session lock: how many of the path's connections were accepted so far. */
    int connectionsUp() {
        int up = 0;
        for (ServerCon c : cons) {
            if (c != null) {
                up++;
            }
        }
        return up;
    }

    /** Connection 0, where heartbeats and the service messages go. */
    ServerCon service() {
        return cons[0];
    }

    /**
     * Under the session lock: the one place the state changes, over Linux's table
     * ({@link ServerPathState#canMoveTo}); false (and no change) for a move Linux does not make.
     */
    boolean changeState(ServerPathState to) {
        if (!state.canMoveTo(to)) {
            return false;
        }
        LOG.debug("path {} of {}: {} -> {}", uuid, session, state, to);
        if (state == ServerPathState.CONNECTING) {
            session.handshakeEnded(remoteAddr);
        }
        state = to;
        return true;
    }

    /**
     * Under the session lock: reserve connection {@code cid} with its receive buffers; null if
     * the slot is taken or the path no longer connecting (Linux: "Connection already exists",
     * "Session in wrong state").
     */
    Connection attach(int cid) throws RdmaException {
        if (state != ServerPathState.CONNECTING || cons[cid] != null) {
            return null;
        }
        RecvPool pool = cid == 0 ? new RecvPool(dev.pd, SERVICE_RECVS, SERVICE_SLOT)
                : new RecvPool(dev.pd, session.chunks().queueDepth() + SPARE_RECVS, 0);
        ServerCon con = new ServerCon(dev, this, cid, pool);
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
            heartbeat.heard();
            try {
                if (wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM) {
                    switch (Imm.checkedType(wc.imm())) {
                        case Imm.IO_REQ -> start = io.onIoReq(con, wc.imm());
                        case Imm.HB_MSG -> heartbeat.ack();
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
        session.afterUnlock();
        if (start != null) {
            session.dispatch(start);
        }
        return !closingOrClosed();
    }

    /** The invalidation of a chunk's rkey completed (always_invalidate): its request goes on. */
    void onChunkInvalidated(ServerCon con, int bufId, int off, boolean ok) {
        ServerRequest start = null;
        synchronized (session) {
            try {
                start = io.chunkInvalidated(con, bufId, off, ok);
            } catch (RdmaException e) {
                failLocked(e.errno(), e.getMessage());
            }
        }
        session.afterUnlock();
        if (start != null) {
            session.dispatch(start);
        }
    }

    private void onServiceMsg(ServerCon con, ByteBuffer msg) throws ProtoException, RdmaException {
        MsgType type = MsgType.peek(msg);
        if (type == MsgType.INFO_REQ) {
            handshake.onInfoReq(con, InfoReq.decode(msg));
            return;
        }
        if (!extensions) {
            // Linux's server knows no other service message; neither does a Linux client send one
            throw new ProtoException(Errno.EPROTO, "unexpected " + type + " from a client without extensions");
        }
        switch (type) {
            case AUTH -> handshake.onAuth(con, AuthMsg.decode(msg));
            case FENCE_REQ -> onFenceReq(con, FenceReq.decode(msg));
            default -> throw new ProtoException(Errno.EPROTO, "unexpected " + type + " on connection 0");
        }
    }

    private void onFenceReq(ServerCon con, FenceReq req) {
        ServerPath target = session.path(req.pathUuid());
        int waitedFor = target == null ? 0 : target.io.inflight();
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
        LOG.info("fencing path {} of {} ({} requests in flight)", target.uuid, session, target.io.inflight());
        target.onDrained.add(answer);
        target.failLocked(Errno.ECANCELED, "fenced");
    }

    void fail(int errno, String why) {
        synchronized (session) {
            failLocked(errno, why);
        }
        session.afterUnlock();
    }

    /** Close the connections; the path leaves the session once its started requests are done. */
    void failLocked(int errno, String why) {
        if (!changeState(ServerPathState.CLOSING)) {
            return;
        }
        LOG.info("closing path {} of {}: {} ({})", uuid, session, why, Errno.name(errno));
        heartbeat.stop();
        handshake.stop();
        for (ServerCon c : cons) {
            if (c != null) {
                c.disconnect();
            }
        }
        io.dropWaiting();
        maybeDrained();
    }

    /** Device going away: give back everything of the device now, drain later. */
    void releaseResources() {
        synchronized (session) {
            failLocked(Errno.ENODEV, "device removed");
            release();
        }
        session.afterUnlock();
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
            io.close();
        });
    }

    /** Under the session lock: a closing path with nothing in flight is closed, and leaves. */
    void maybeDrained() {
        if (state != ServerPathState.CLOSING || io.inflight() > 0) {
            return;
        }
        changeState(ServerPathState.CLOSED);
        release();
        session.pathGone(this);
        for (IntConsumer c : onDrained) {
            c.accept(dropped);
        }
        onDrained.clear();
    }

    RtrsServerPathInfo info() {
        ServerCon c0 = cons[0];
        String local = c0 == null || c0.qp() == null ? "" : hostPort(c0.qp().localAddress());
        String remote = c0 == null || c0.qp() == null ? "" : hostPort(c0.qp().remoteAddress());
        return new RtrsServerPathInfo(uuid, dev.device.name(), local, remote, connectionsUp(), io.inflight());
    }

    /** "127.0.0.1:1234", as the console shows addresses (InetSocketAddress prints "/127.0.0.1:1234"). */
    private static String hostPort(java.net.InetSocketAddress a) {
        return a == null ? "" : a.getAddress().getHostAddress() + ":" + a.getPort();
    }
}

package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.WcOpcode;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.PathView;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
import io.rnbd.rtrs.core.Heartbeat;
import io.rnbd.rtrs.proto.AuthMsg;
import io.rnbd.rtrs.proto.FenceReq;
import io.rnbd.rtrs.proto.FenceRsp;
import io.rnbd.rtrs.proto.Imm;
import io.rnbd.rtrs.proto.InfoRsp;
import io.rnbd.rtrs.proto.MsgType;
import io.rnbd.rtrs.proto.ProtoException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ScheduledFuture;

/**
 * One path of a client session: connection 0 (service) plus N IO connections, the
 * server's chunk descriptors, heartbeat, and its own reconnect loop. Every field is
 * guarded by the session lock; a connect attempt is a generation, and events of older
 * generations are ignored.
 *
 * <p>This class is the path's instance and life: its state ({@link PathStateMachine}), what
 * it receives, failure, reconnect and teardown. Its parts: {@link PathHandshake} (connecting
 * an instance), {@link PathIo} (the requests in flight on it), and its {@link Heartbeat}
 * (rtrs-core's, the server's too). It and they see the session only through {@link PathSession}.
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

    final PathSession session;
    final PathAddress addr;
    final UUID uuid = UUID.randomUUID();
    final PathStateMachine sm = new PathStateMachine();
    final PathStats stats = new PathStats();
    final PathHandshake handshake;
    final PathIo io;
    final Heartbeat hb;

    // ---- the current instance: set by the handshake, released by teardown ------------
    /** The connect attempt; a connection's events of an older one are ignored. */
    int gen;
    /** Linux's recon_cnt: which instance of the path the server sees (and fences). */
    int reconCnt;
    RdmaDevice device;
    ProtectionDomain pd;
    ClientCon[] cons = new ClientCon[0];
    /** From this instance's CON_RSP: the server is an appliance (EXT_F). */
    boolean serverExtensions;
    /**
     * Linux's for_new_clt: this path may ask the server to create the session (first_conn);
     * set once the server accepted it, so any path that has been in the session can bring it
     * back after a server restart.
     */
    boolean forNewClt;
    /** The connect timeout or the reconnect delay, whichever runs. */
    ScheduledFuture<?> timerTask;

    // ---- what policies and admins read (PathView, info) -------------------------------
    volatile int inflightCount;
    volatile long ioLatency;
    int attempts;
    int lastError;
    private boolean everConnected;
    private boolean manualStop;

    ClientPath(PathSession session, PathAddress addr) {
        this.session = session;
        this.addr = addr;
        this.handshake = new PathHandshake(this);
        this.io = new PathIo(this);
        this.hb = new Heartbeat(new Heartbeat.Path() {
            @Override
            public boolean connected() {
                return sm.state() == PathState.CONNECTED;
            }

            @Override
            public void writeImmEmpty(int imm) throws RdmaException {
                cons[0].writeImmEmpty(imm);
            }

            @Override
            public void fail(int errno, String why) {
                ClientPath.this.fail(errno, why);
            }
        }, session, session.cfg().hbIntervalMs(), session.cfg().hbMissedMax());
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
        return hb.rttNanos();
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

    /** The one way this path changes state ({@link PathStateMachine}); false if the move is not allowed. */
    boolean change(PathState to) {
        PathState from = sm.state();
        if (!sm.change(to)) {
            LOG.debug("path {}: {} -> {} not allowed", name(), from, to);
            return false;
        }
        LOG.debug("path {}: {} -> {}", name(), from, to);
        return true;
    }

    boolean usable() {
        return sm.state() == PathState.CONNECTED;
    }

    /** Whether this path's server fences (another appliance): Linux's does not. */
    boolean serverFences() {
        return serverExtensions;
    }

    boolean usesDevice(RdmaDevice d) {
        return device == d;
    }

    // ---- what arrives --------------------------------------------------------------------

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
            hb.heard();
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
                    onServiceMsg(c.received(wc));
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

    private void onServiceMsg(ByteBuffer msg) throws ProtoException, RdmaException {
        MsgType type = MsgType.peek(msg);
        if (type == MsgType.INFO_RSP) {
            handshake.onInfoRsp(InfoRsp.decode(msg));
            return;
        }
        if (!serverExtensions) {
            throw new ProtoException(Errno.EPROTO, "unexpected " + type + " from a server without extensions");
        }
        switch (type) {
            case AUTH -> handshake.onAuth(AuthMsg.decode(msg));
            case FENCE_RSP -> session.fenced(this, FenceRsp.decode(msg));
            default -> throw new ProtoException(Errno.EPROTO, "unexpected " + type);
        }
    }

    /**
     * An immediate: a heartbeat, its acknowledgement, or an answer. An answer with a payload
     * ({@code msg} non-null) carries its chunk's new rkey (rtrs_clt_rkey_rsp_done).
     * IO_RSP_W_INV says the server invalidated our read region, which we never ask for.
     */
    private void onImm(ClientCon c, int imm, ByteBuffer msg) throws ProtoException, RdmaException {
        switch (Imm.checkedType(imm)) {
            case Imm.HB_MSG -> hb.ack();
            case Imm.HB_ACK -> hb.acked();
            case Imm.IO_RSP, Imm.IO_RSP_W_INV -> io.answered(imm, msg);
            default -> throw new ProtoException(Errno.EPROTO, "unexpected imm type " + Imm.type(imm));
        }
    }

    void sendFence(int fenceId, UUID failed, int failedReconCnt) {
        try {
            cons[0].send(FenceReq.SIZE, new FenceReq(fenceId, failed, failedReconCnt)::encode);
        } catch (RdmaException e) {
            fail(e.errno(), "cannot send FENCE");
        }
    }

    // ---- up, failure, reconnect ----------------------------------------------------------

    /** Under the lock: the handshake is done, the path carries IO. */
    void up() {
        // A path that never connected is still connecting, not reconnecting: at boot the
        // client often comes up before the server listens, and counting that as a failed and
        // then a successful reconnect on every path would report trouble that never was.
        if (everConnected) {
            stats.reconnect(true);
        }
        everConnected = true;
        attempts = 0;
        lastError = 0;
        hb.start();
        LOG.info("path {} of session {} connected via {}", name(), session.cfg().sessionName(), device.name());
        session.connected(this);
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
        LOG.warn("path {} of session {} failed: {} ({})", name(), session.cfg().sessionName(), why,
                Errno.name(status & 0xffff));
        lastError = status & 0xffff;
        int failedReconCnt = reconCnt;
        List<ClientRequest> orphans = teardown();
        change(PathState.RECONNECTING);
        session.failover(this, failedReconCnt, orphans);
        scheduleReconnect();
    }

    /** Under the lock: this connect attempt failed; reconnect later, or give up. */
    void connectFailed(int status, String why) {
        LOG.info("path {} of session {}: connect failed: {}", name(), session.cfg().sessionName(), why);
        lastError = status & 0xffff;
        teardown();
        attempts++;
        if (everConnected) {
            stats.reconnect(false);
        }
        change(PathState.CONNECTING_ERR);
        boolean retry = !manualStop && session.reconnectPolicy().shouldReconnect(status, attempts);
        session.connectFailed(this, status & 0xffff, retry);
        if (retry) {
            change(PathState.RECONNECTING);
            scheduleReconnect();
        }
    }

    private void scheduleReconnect() {
        long delay = session.reconnectPolicy().delayMs(attempts + 1);
        cancelTimer();
        timerTask = session.later(delay, () -> {
            if (sm.state() == PathState.RECONNECTING && change(PathState.CONNECTING)) {
                handshake.connect();
            }
        });
    }

    /** Release every resource of the current generation; returns the requests it had in flight. */
    private List<ClientRequest> teardown() {
        gen++;
        hb.stop();
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
        List<ClientRequest> orphans = io.release();
        pd = null;
        handshake.release();
        device = null;
        stats.failovers(orphans.size());
        return orphans;
    }

    void cancelTimer() {
        if (timerTask != null) {
            timerTask.cancel(false);
            timerTask = null;
        }
    }

    // ---- admin ---------------------------------------------------------------------------

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
                handshake.connect();
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
                lastError, stats.snapshot(inflightCount, hb.rttNanos(), ioLatency));
    }

    @Override
    public String toString() {
        return name();
    }
}

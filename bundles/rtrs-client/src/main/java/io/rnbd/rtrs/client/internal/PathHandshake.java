package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RecvPool;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.api.AuthExchange;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.proto.AuthMsg;
import io.rnbd.rtrs.proto.ConReq;
import io.rnbd.rtrs.proto.ConRsp;
import io.rnbd.rtrs.proto.InfoReq;
import io.rnbd.rtrs.proto.InfoRsp;
import io.rnbd.rtrs.proto.ProtoException;
import io.rnbd.rtrs.proto.RkeyRsp;
import io.rnbd.rtrs.proto.Rtrs;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connecting one instance of a path, as Linux's rtrs-clt.c: every connection's CON_REQ in
 * its connect and CON_RSP in the accept (or the reject's errno), one connection after the
 * other as {@code init_conns} does (connection N+1's connect only once N is established), then
 * on connection 0 the
 * AUTH exchange when the server asks for it (appliances only), then INFO_REQ/INFO_RSP with
 * the server's chunks. Driven by the connections' CM events and connection 0's messages;
 * guarded by the session lock.
 */
final class PathHandshake {
    /** The path's logger: these lines were always the path's. */
    private static final Logger LOG = LoggerFactory.getLogger(ClientPath.class);
    private static final int SERVICE_RECVS = 16;
    /** Beyond one per permit on an IO connection. */
    private static final int SPARE_RECVS = 16;
    private static final long CONNECT_TIMEOUT_MS = 30_000;

    private final ClientPath path;
    private final PathSession session;
    /** Waiting for its turn: another path is creating the session on the server. */
    private boolean deferred;
    /** The instance being connected: what each connection's connect needs. */
    private int queueWrs;
    private boolean firstConn;
    private int chunkSize;
    private AuthExchange auth;
    private String authMethod;

    PathHandshake(ClientPath path) {
        this.path = path;
        this.session = path.session;
    }

    /** Under the lock, in CONNECTING: open every connection of a new generation. */
    void connect() {
        if (!session.mayConnect(path)) {
            // another path is creating the session on the server: two creators would race
            deferred = true;
            path.cancelTimer();
            path.timerTask = session.later(session.mayConnectAgainInMs(), this::connectIfDeferred);
            return;
        }
        deferred = false;
        path.gen++;
        path.reconCnt = (path.reconCnt + 1) & 0xffff;
        PathAddress addr = path.addr;
        path.device = session.device(addr.src());
        if (path.device == null) {
            path.connectFailed(Errno.ENODEV, "no RDMA device for "
                    + (addr.src() == null ? "any address" : addr.src()));
            return;
        }
        int n = 1 + session.cfg().effectiveCons();
        firstConn = session.mayCreate(path);
        try {
            path.pd = path.device.allocPd();
            ClientCon[] cons = new ClientCon[n];
            path.cons = cons;
            // the queue depth is known only from CON_RSP: size for the largest the device allows
            queueWrs = Math.min(path.device.attributes().maxQpWr(), 2 * Rtrs.MAX_SESS_QUEUE_DEPTH + 64);
            for (int cid = 0; cid < n; cid++) {
                cons[cid] = new ClientCon(path, path.gen, cid, path.pd);
            }
            connect(cons[0]);
        } catch (RdmaException e) {
            path.connectFailed(e.errno(), e.getMessage());
            return;
        }
        path.timerTask = session.later(CONNECT_TIMEOUT_MS, () -> {
            if (path.sm.state() == PathState.CONNECTING) {
                path.connectFailed(Errno.ETIMEDOUT, "connect timeout");
            }
        });
    }

    /**
     * One connection's connect. Never two of a path at once: Linux's server is only ever
     * driven one connection at a time by Linux's client (init_conns), and a connect request
     * arriving while another of the same path is mid-handshake is not what its server is tested
     * with. (This was first suspected of 7.3's oops in docs/interop.md's run 9; the cause was two
     * paths creating the session at once, which {@link FirstConn} now prevents: run 13.)
     */
    private void connect(ClientCon c) throws RdmaException {
        int n = path.cons.length;
        // two SGEs: an in-place write sends the caller's data and the header from the permit's buffer
        QpInit init = new QpInit(path.pd, queueWrs, queueWrs, 2, c);
        ConReq req = new ConReq(c.cid, n, path.reconCnt, path.uuid, session.uuid(), firstConn, true);
        c.qp = path.device.connect(path.addr.destination(), init, req.toBytes(), c);
    }

    /** Under the lock: the session says it is this path's turn to connect. */
    void connectIfDeferred() {
        if (deferred && path.sm.state() == PathState.CONNECTING) {
            path.cancelTimer();
            connect();
        }
    }

    /** Under the lock: the instance is gone; an exchange in progress with it too. */
    void release() {
        auth = null;
    }

    void onCmEvent(ClientCon c, CmEvent e) {
        session.locked(() -> {
            if (c.gen != path.gen) {
                return;
            }
            try {
                switch (e.type()) {
                    case ESTABLISHED -> onConRsp(c, ConRsp.decode(e.privateData()));
                    case REJECTED -> onRejected(e);
                    default -> path.fail(ClientCon.errnoOf(e), "connection " + e.detail());
                }
            } catch (ProtoException ex) {
                path.fail(ex.errno(), "connection " + c.cid + ": " + ex.getMessage());
            } catch (RdmaException ex) {
                path.fail(ex.errno(), ex.getMessage());
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
                LOG.debug("path {}: reject with malformed private data", path.name());
            }
        }
        path.fail(errno | (dnr ? ReconnectPolicy.DNR : 0), "server refused: " + Errno.name(errno));
    }

    /** rtrs_rdma_conn_established: the server's limits and flags; INFO_REQ once every connection is up. */
    private void onConRsp(ClientCon c, ConRsp rsp) throws ProtoException, RdmaException {
        if (rsp.errno() != 0) {
            throw new ProtoException(Errno.ECONNRESET, "accepted with errno " + rsp.errno());
        }
        int err = session.accepted(path, c.cid, rsp);
        if (err != 0) {
            // Linux's client stops reconnecting for good here; the session adopts the new sizes
            // as soon as nothing uses the old (Permits.negotiated), so this path tries again
            path.connectFailed(err, "server queue depth changed to " + rsp.queueDepth() + " (max IO "
                    + rsp.maxIoSize() + ") while the session's other paths or requests in flight use "
                    + session.queueDepth() + ": trying again later");
            return;
        }
        if (c.cid == 0) {
            path.io.newRkey(rsp.has(ConRsp.NEW_RKEY_F));
            path.serverExtensions = rsp.has(ConRsp.EXT_F);
            chunkSize = rsp.chunkSize();
            path.forNewClt = true;
        }
        path.io.registerMemory(path.pd);
        int qd = rsp.queueDepth();
        c.recvs = c.cid == 0
                ? new RecvPool(path.pd, SERVICE_RECVS, Math.max(AuthMsg.MAX_SIZE, InfoRsp.size(qd)))
                : new RecvPool(path.pd, qd + SPARE_RECVS, rsp.has(ConRsp.NEW_RKEY_F) ? RkeyRsp.SIZE : 0);
        c.recvs.postAll(c.qp);
        c.ready = true;
        if (c.cid + 1 < path.cons.length && path.cons[c.cid + 1].qp == null) {
            connect(path.cons[c.cid + 1]);
            return;
        }
        for (ClientCon x : path.cons) {
            if (!x.ready) {
                return;
            }
        }
        Authenticator a = session.authenticator();
        if (path.serverExtensions && rsp.has(ConRsp.AUTH_F)) {
            startAuth();
        } else if (!path.serverExtensions && a != null && !"none".equals(a.method())) {
            path.connectFailed(Errno.EACCES | ReconnectPolicy.DNR, "the server does not speak this appliance's RTRS "
                    + "extensions (a Linux rnbd-server?) and cannot authenticate, but authentication (" + a.method()
                    + ") is required");
        } else {
            sendInfoReq();
        }
    }

    private void sendInfoReq() throws RdmaException {
        path.cons[0].send(InfoReq.SIZE, new InfoReq(session.cfg().sessionName())::encode);
    }

    private void startAuth() throws RdmaException {
        Authenticator a = session.authenticator();
        if (a == null) {
            path.connectFailed(Errno.ENOKEY, "server requires authentication, none configured");
            return;
        }
        try {
            auth = a.initiate(session.cfg().hostId());
            authMethod = a.method();
            byte[] out = auth.step(new byte[0]);
            AuthMsg m = AuthMsg.step(authMethod, out, false);
            path.cons[0].send(m.size(), m::encode);
        } catch (AuthException e) {
            path.connectFailed(e.errno(), "authentication: " + Errno.name(e.errno()));
        }
    }

    void onAuth(AuthMsg m) throws ProtoException, RdmaException {
        if (auth == null || path.sm.state() != PathState.CONNECTING) {
            throw new ProtoException(Errno.EPROTO, "AUTH out of sequence");
        }
        if (m.status() != 0) {
            path.connectFailed(m.status() | (m.has(AuthMsg.DNR_F) ? ReconnectPolicy.DNR : 0),
                    "server refused authentication: " + Errno.name(m.status()));
            return;
        }
        try {
            byte[] out = m.data().length == 0 && m.has(AuthMsg.FINAL_F) ? null : auth.step(m.data());
            if (m.has(AuthMsg.FINAL_F)) {
                if (!auth.done()) {
                    path.connectFailed(Errno.EKEYREJECTED, "server not authenticated");
                    return;
                }
                sendInfoReq();
            } else if (out == null) {
                throw new ProtoException(Errno.EPROTO, "authentication stalled");
            } else {
                AuthMsg next = AuthMsg.step(authMethod, out, false);
                path.cons[0].send(next.size(), next::encode);
            }
        } catch (AuthException e) {
            path.connectFailed(e.errno(), "authentication: " + Errno.name(e.errno()));
        }
    }

    /** The server's chunks: the path is up. */
    void onInfoRsp(InfoRsp rsp) throws ProtoException {
        if (path.sm.state() != PathState.CONNECTING) {
            throw new ProtoException(Errno.EPROTO, "INFO_RSP out of sequence");
        }
        path.io.chunks(rsp.chunks(session.queueDepth(), chunkSize));
        path.cancelTimer();
        if (path.change(PathState.CONNECTED)) {
            path.up();
        }
    }
}

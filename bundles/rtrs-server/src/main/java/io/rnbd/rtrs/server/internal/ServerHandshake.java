package io.rnbd.rtrs.server.internal;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.api.AuthExchange;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.proto.AuthMsg;
import io.rnbd.rtrs.proto.InfoReq;
import io.rnbd.rtrs.proto.InfoRsp;
import io.rnbd.rtrs.proto.ProtoException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ScheduledFuture;

/**
 * The handshake of one path once its connections are accepted: authentication on
 * connection 0 (only with a client that speaks the extensions), then the INFO_REQ that names
 * the session and is answered with the chunks' addresses and keys (process_info_req), all
 * before {@code handshake.timeout.ms}. Under the session's lock but for the deadline.
 */
final class ServerHandshake {
    /** The path's log, as before ServerPath was split: operators filter it by that name. */
    private static final Logger LOG = LoggerFactory.getLogger(ServerPath.class);

    private final ServerPath path;
    private final PathSession session;
    private final ServerConfig cfg;
    private boolean authenticated;
    private AuthExchange auth;
    private String authMethod;
    /** What this path's authentication established: the host id, whether proven, by which method. */
    private String peerHostId = "";
    private boolean peerProven;
    private final ScheduledFuture<?> deadline;

    ServerHandshake(ServerPath path, ServerConfig cfg) {
        this.path = path;
        this.session = path.session;
        this.cfg = cfg;
        // A path that never finishes its handshake (CON_REQ accepted; authentication or
        // INFO_REQ never come) is closed at the deadline, so it holds nothing for long.
        this.deadline = session.later(cfg.handshakeTimeoutMs(), this::deadlineReached);
    }

    /** The path connected or is closing: no deadline any more. */
    void stop() {
        deadline.cancel(false);
    }

    /** Under the lock. */
    private void deadlineReached() {
        if (path.connecting()) {
            int up = path.connectionsUp();
            int all = path.cidNum();
            String step = up < all ? up + " of " + all + " connections up"
                    : path.extensions && auth != null && !authenticated ? "authentication (" + authMethod + ") unfinished"
                    : "no INFO_REQ";
            LOG.warn("closing path {} ({}) of {}: handshake not finished within {} ms (handshake.timeout.ms): {}",
                    path.remoteAddr.getHostAddress(), path.uuid, session, cfg.handshakeTimeoutMs(), step);
            session.handshakeTimedOut();
            path.failLocked(Errno.ETIMEDOUT, "handshake timeout");
        }
    }

    void onAuth(ServerCon con, AuthMsg m) throws ProtoException {
        if (!path.connecting() || authenticated) {
            throw new ProtoException(Errno.EPROTO, "AUTH out of sequence");
        }
        if (m.status() != 0) {
            throw new ProtoException(m.status(), "client aborted authentication");
        }
        if (auth == null) {
            Authenticator a = session.authenticator();
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
            LOG.warn("authentication of path {} failed: {}", path.uuid, Errno.name(e.errno()));
            refuseAuth(con, authMethod, e.errno());
        }
    }

    private void refuseAuth(ServerCon con, String method, int errno) {
        // Do-not-retry only where a retry cannot succeed (no key, wrong key, a method the
        // client does not speak); EAGAIN (the configured method's bundle is not running yet)
        // must let the client come back.
        boolean dnr = errno != Errno.EAGAIN;
        AuthMsg f = AuthMsg.failure(method.length() > AuthMsg.METHOD_MAX ? "" : method, errno, dnr);
        con.send(f.size(), f::encode, () -> path.fail(errno, "authentication failed"));
    }

    /** process_info_req: names the session, answers with the chunks, starts heartbeats. */
    void onInfoReq(ServerCon con, InfoReq req) throws ProtoException {
        if (!path.connecting()) {
            throw new ProtoException(Errno.EPROTO, "INFO_REQ out of sequence");
        }
        if (path.extensions && session.authenticator() != null && !authenticated) {
            throw new ProtoException(Errno.EACCES, "INFO_REQ before authentication");
        }
        if (path.connectionsUp() < path.cidNum()) {
            throw new ProtoException(Errno.EPROTO, "INFO_REQ before all connections are up");
        }
        String name = req.pathName();
        if (name.indexOf('/') >= 0 || name.indexOf('.') >= 0) {
            throw new ProtoException(Errno.EINVAL, "session name " + name + " contains / or .");
        }
        PathSession.Refusal no = session.join(name, peerHostId, authenticated && peerProven,
                authenticated ? authMethod : "");
        if (no != null) {
            if (no.errno() == Errno.EACCES) {
                LOG.warn("refusing path {} ({}) of session {}: {}", path.remoteAddr.getHostAddress(), path.uuid, name,
                        no.why());
            }
            throw new ProtoException(no.errno(), no.why());
        }
        try {
            path.io.registerChunks();
        } catch (RdmaException e) {
            throw new ProtoException(e.errno(), "cannot register the chunks: " + e.getMessage());
        }
        deadline.cancel(false);
        InfoRsp rsp = new InfoRsp(path.io.chunkDescs());
        path.changeState(ServerPathState.CONNECTED);
        // announced before the client can send anything: a session whose requests the upper
        // layer saw is one whose close it will be told of
        session.connected();
        con.send(rsp.size(), rsp::encode, null);
        path.heartbeat.start();
        LOG.info("path {} ({}) of session {} connected, host id {}{}", path.remoteAddr.getHostAddress(), path.uuid,
                name, describeIdentity(),
                path.extensions ? "" : " (a client without this appliance's extensions, e.g. Linux: no authentication, no fencing)");
    }

    private String describeIdentity() {
        if (!authenticated) {
            return "none (not authenticated)";
        }
        return "'" + peerHostId + "' " + (peerProven ? "proven by " : "claimed through ") + authMethod;
    }
}

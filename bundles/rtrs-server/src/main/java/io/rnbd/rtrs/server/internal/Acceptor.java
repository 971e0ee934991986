package io.rnbd.rtrs.server.internal;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.ConnectRequest;
import io.rnbd.rdma.api.IbClient;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.proto.ConReq;
import io.rnbd.rtrs.proto.ConRsp;
import io.rnbd.rtrs.proto.ProtoException;
import io.rnbd.rtrs.proto.Rtrs;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The server as an IB client: it listens on a device's addresses only between
 * {@code add(device)} and {@code remove(device)}, lets go of everything on that device in
 * {@code remove}, and answers connect requests (rtrs_rdma_connect): its private data is the
 * CON_REQ; the answer is an accept carrying the CON_RSP or a reject carrying a CON_RSP with
 * the errno. What a request finds or creates, a session and a path, is the session table's
 * ({@link Sessions}); what is decided here is what needs no session: a CON_REQ that cannot be
 * read, and a client that cannot authenticate where authentication is required.
 */
final class Acceptor implements IbClient {
    private static final Logger LOG = LoggerFactory.getLogger(Acceptor.class);
    private static final String NONE = "none";

    private final ServerConfig cfg;
    private final Sessions sessions;
    private final Supplier<Authenticator> auth;
    private final Map<RdmaDevice, DeviceContext> devices = new ConcurrentHashMap<>();

    Acceptor(ServerConfig cfg, Sessions sessions, Supplier<Authenticator> auth) {
        this.cfg = cfg;
        this.sessions = sessions;
        this.auth = auth;
    }

    @Override
    public String clientName() {
        return "rtrs-server";
    }

    @Override
    public void add(RdmaDevice device) {
        ProtectionDomain pd;
        try {
            pd = device.allocPd();
        } catch (RdmaException e) {
            LOG.error("rtrs-server cannot use device {}: {}", device.name(), e.getMessage());
            return;
        }
        DeviceContext ctx = new DeviceContext(device, pd);
        devices.put(device, ctx);
        for (InetAddress a : device.addresses()) {
            try {
                CmListener l = device.listen(new InetSocketAddress(a, cfg.port()), req -> onConnectRequest(ctx, req));
                ctx.listeners.add(l);
                LOG.info("rtrs-server listening on {} ({})", l.localAddress(), device.name());
            } catch (RdmaException e) {
                LOG.error("rtrs-server cannot listen on {}:{} of {}: {}", a.getHostAddress(), cfg.port(),
                        device.name(), e.getMessage());
            }
        }
    }

    @Override
    public void remove(RdmaDevice device) {
        DeviceContext ctx = devices.remove(device);
        if (ctx == null) {
            return;
        }
        ctx.listeners.forEach(CmListener::close);
        sessions.deviceRemoved(ctx);
        for (Connection c : List.copyOf(ctx.cons)) {
            c.close();
        }
        ctx.pd.close();
        LOG.info("rtrs-server released device {}", device.name());
    }

    /** Where the server listens on {@code device} (with the real port when 0 was configured). */
    List<InetSocketAddress> listenAddresses(RdmaDevice device) {
        DeviceContext ctx = devices.get(device);
        List<InetSocketAddress> out = new ArrayList<>();
        if (ctx != null) {
            ctx.listeners.forEach(l -> out.add(l.localAddress()));
        }
        return out;
    }

    /** Let go of every device, as if each were removed. */
    void close() {
        for (RdmaDevice d : List.copyOf(devices.keySet())) {
            remove(d);
        }
    }

    private void onConnectRequest(DeviceContext ctx, ConnectRequest req) {
        ConReq cr;
        try {
            cr = ConReq.decode(req.privateData());
        } catch (ProtoException e) {
            LOG.warn("refusing connection from {}: {}", req.remoteAddress(), e.getMessage());
            reject(req, e.errno(), false);
            return;
        }
        Authenticator a = auth.get();
        if (!cr.extensions() && a != null && !NONE.equals(a.method())) {
            // a Linux client cannot authenticate: refusing it is the only safe answer
            LOG.warn("refusing connection from {}: the client does not speak this appliance's RTRS extensions "
                    + "(a Linux rnbd-client?) and authentication ({}) is required", req.remoteAddress(), a.method());
            reject(req, Errno.EACCES, true);
            return;
        }
        Sessions.Admission in = sessions.admit(cr, ctx, req.localAddress(), req.remoteAddress());
        if (in.errno() != 0) {
            LOG.info("refusing connection {} of path {} from {}: {}", cr.cid(), cr.pathUuid(), req.remoteAddress(),
                    Errno.name(in.errno()));
            reject(req, in.errno(), in.doNotRetry());
            return;
        }
        int flags = cfg.alwaysInvalidate() ? ConRsp.NEW_RKEY_F : 0;
        if (cr.extensions()) {
            flags |= ConRsp.EXT_F | (a != null ? ConRsp.AUTH_F : 0);
        }
        ConRsp rsp = ConRsp.accept(in.queueDepth(), in.maxIoSize(), Rtrs.MAX_HDR_SIZE, flags);
        int max = ctx.device.attributes().maxQpWr();
        // per request: read data, the client's invalidation, answer, and under always_invalidate
        // the chunk's invalidation and re-registration; plus heartbeats (rtrs-srv create_con)
        int sendWr = Math.min(max, (cfg.alwaysInvalidate() ? 5 : 3) * in.queueDepth() + 64);
        int recvWr = Math.min(max, in.recvs());
        Connection c = in.con();
        try {
            req.accept(new QpInit(ctx.pd, sendWr, recvWr, 1, c), c, rsp.toBytes(), c::setUp);
        } catch (RdmaException e) {
            LOG.warn("cannot accept {}: {}", req.remoteAddress(), e.getMessage());
            c.acceptFailed(e.errno());
        }
    }

    private static void reject(ConnectRequest req, int errno, boolean doNotRetry) {
        req.reject(errno, ConRsp.refuse(errno, doNotRetry).toBytes());
    }
}

package io.rnbd.rtrs.server.internal;

import io.rnbd.rdma.api.IbClient;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.api.RtrsServerSessionInfo;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The RTRS server, an {@link IbClient}: it listens on a device's addresses only between
 * {@code add(device)} and {@code remove(device)}, and lets go of everything on that
 * device in {@code remove}. Plain Java: build it, hand it devices, close it.
 *
 * <pre>
 *   RtrsServer srv = new RtrsServer(config, () -&gt; ops, () -&gt; null, scheduler, System::nanoTime);
 *   srv.add(device);            // what the device registry (rdma-core) does for IB clients
 *   ...
 *   srv.close();
 * </pre>
 *
 * <p>This class only puts the rooms together and is their one face: the {@link Acceptor}
 * (devices, listeners, connect requests), the {@link SessionTable} (sessions and the admin's
 * view of them), the {@link UpperLayerHandoff} (requests and session events to the upper
 * layer). Each reaches the next only through a narrow interface ({@link Sessions},
 * {@link UpperLayer}), as a path reaches its session ({@link PathSession}).
 */
public final class RtrsServer implements IbClient, RtrsServerAdmin, AutoCloseable {
    private final ServerConfig cfg;
    private final Supplier<Authenticator> auth;
    private final UpperLayerHandoff upper;
    private final SessionTable table;
    private final Acceptor acceptor;

    /**
     * @param ops   the upper layer now (may change between calls; null = none, requests wait
     *              {@code upper.wait.ms}, then fail with ENODEV)
     * @param auth  the authenticator now (null = no authentication)
     * @param timer runs heartbeats and timeouts; owned by the caller
     */
    public RtrsServer(ServerConfig cfg, Supplier<RtrsServerOps> ops, Supplier<Authenticator> auth,
                      ScheduledExecutorService timer, LongSupplier nanos) {
        this(cfg, ops, auth, timer, nanos, new SessionLimits());
    }

    /**
     * @param limits the queue depth and chunk size of the sessions seen so far, handed on from
     *               a server this one replaces: a session coming back gets its own again
     */
    public RtrsServer(ServerConfig cfg, Supplier<RtrsServerOps> ops, Supplier<Authenticator> auth,
                      ScheduledExecutorService timer, LongSupplier nanos, SessionLimits limits) {
        this.cfg = cfg;
        this.auth = auth;
        this.upper = new UpperLayerHandoff(ops, timer, cfg.upperWaitMs());
        this.table = new SessionTable(cfg, limits, upper, auth, timer, nanos);
        this.acceptor = new Acceptor(cfg, table, auth);
    }

    public ServerConfig config() {
        return cfg;
    }

    // ---- IbClient: the acceptor ---------------------------------------------------------

    @Override
    public String clientName() {
        return acceptor.clientName();
    }

    @Override
    public void add(RdmaDevice device) {
        acceptor.add(device);
    }

    @Override
    public void remove(RdmaDevice device) {
        acceptor.remove(device);
    }

    /** Where the server listens on {@code device} (with the real port when 0 was configured). */
    public List<InetSocketAddress> listenAddresses(RdmaDevice device) {
        return acceptor.listenAddresses(device);
    }

    // ---- the session table ----------------------------------------------------------------

    /** Paths refused because their source had too many in the handshake, and paths closed at the deadline. */
    public long[] handshakeCounters() {
        return table.handshakeCounters();
    }

    /**
     * queue.depth and chunk.size for sessions this server has not seen; those it has keep
     * theirs, connected or coming back ({@link SessionLimits}).
     *
     * @throws IllegalArgumentException for limits {@link ServerConfig} refuses
     */
    public void newSessionLimits(int queueDepth, int chunkSize) {
        table.newSessionLimits(queueDepth, chunkSize);
    }

    public Optional<ServerSession> session(String name) {
        return table.session(name);
    }

    @Override
    public List<RtrsServerSessionInfo> sessions() {
        return table.sessions();
    }

    @Override
    public boolean closeSession(String name) {
        return table.closeSession(name);
    }

    @Override
    public String authMethod() {
        Authenticator a = auth.get();
        return a == null ? "" : a.method();
    }

    // ---- the upper layer ----------------------------------------------------------------

    /** Requests waiting for an upper layer now. */
    public int waitingForUpperLayer() {
        return upper.waiting();
    }

    /** The upper layer came, went or was replaced: what waited for one goes to it now. */
    public void upperLayerChanged() {
        upper.upperLayerChanged();
    }

    /**
     * Let go of every device (as if each were removed), answer every request still waiting for
     * an upper layer (ENODEV), and tell the upper layer that every session it knows of is
     * closed before returning: a path still draining a request the upper layer holds leaves
     * later, when nobody (the timer has stopped with the bundle) would pass its close on.
     */
    @Override
    public void close() {
        acceptor.close();
        upper.failParked();
        table.close();
        upper.close();
    }
}

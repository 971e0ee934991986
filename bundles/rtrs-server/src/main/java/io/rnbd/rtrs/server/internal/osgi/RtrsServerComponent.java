package io.rnbd.rtrs.server.internal.osgi;

import io.rnbd.rtrs.api.Ranked;
import io.rnbd.rdma.api.IbClient;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.Authenticators;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.server.internal.RtrsServer;
import io.rnbd.rtrs.server.internal.ServerConfig;
import io.rnbd.rtrs.server.internal.SessionLimits;
import org.osgi.annotation.bundle.Capability;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The RTRS server in OSGi (singleton PID {@code io.rnbd.rtrs.server}): builds the
 * {@link RtrsServer} and its timer thread and registers the server itself, no forwarding
 * component between, as the {@link IbClient} that listens only on devices the registry hands
 * over; and the {@link RtrsServerAdmin} of the console, JMX and telemetry ({@link ServerAdmin}:
 * the server's own view, and setAuthMethod over ConfigAdmin). Tracks the upper layers
 * ({@link RtrsServerOps}, the highest-ranked serves), the authenticators ({@code auth.method},
 * {@link Authenticators#select}) and ConfigAdmin, all dynamically.
 */
// DS does not declare the services this registers by hand: say so, so bundles that need them
// resolve where service requirements are enforced.
@Capability(namespace = "osgi.service", attribute = "objectClass:List<String>=io.rnbd.rdma.api.IbClient",
        uses = IbClient.class)
@Capability(namespace = "osgi.service", attribute = "objectClass:List<String>=io.rnbd.rtrs.api.RtrsServerAdmin",
        uses = RtrsServerAdmin.class)
@Component(configurationPid = "io.rnbd.rtrs.server", configurationPolicy = ConfigurationPolicy.OPTIONAL,
        service = {}, immediate = true)
@Designate(ocd = RtrsServerComponent.Config.class)
public final class RtrsServerComponent {
    @ObjectClassDefinition(name = "RTRS server", description = "The RDMA transport server: chunk pools, always_invalidate, heartbeats.")
    public @interface Config {
        @AttributeDefinition(name = "Port", description = "Listening port on every address of every RDMA device.")
        int port() default 1234;

        @AttributeDefinition(name = "Chunk size", description = "Bytes per chunk (power of two, >= 8192); max IO = chunk "
                + "size - 4096. Default 262144, so that a 128 KiB request goes whole (Linux's rtrs-srv: 131072). "
                + "A change applies to new sessions; a session the server has seen keeps its own, also when it "
                + "reconnects.")
        int chunk_size() default ServerConfig.DEFAULT_CHUNK_SIZE;

        @AttributeDefinition(name = "Queue depth", description = "Chunks per session = permits of each client session, "
                + "the most IO it has in flight (1..65535). Default 256: queue.depth x chunk.size of memory per session, "
                + "64 MiB, as Linux's defaults (512 x 128 KiB). A change applies to new sessions, without a restart; "
                + "a session the server has seen keeps its own, also when it reconnects (Linux's client gives up for "
                + "good on a session whose queue depth changed).")
        int queue_depth() default ServerConfig.DEFAULT_QUEUE_DEPTH;

        @AttributeDefinition(name = "Always invalidate", description = "Invalidate a chunk's rkey before the upper layer sees it and send a new one with the response (costs 15-20 %).")
        boolean always_invalidate() default true;

        @AttributeDefinition(name = "Heartbeat interval (ms)", description = "Period of heartbeats on each path's service connection.")
        long hb_interval_ms() default 5000;

        @AttributeDefinition(name = "Heartbeats missed", description = "Missed heartbeats after which a path is closed.")
        int hb_missed_max() default 5;

        @AttributeDefinition(name = "Upper layer wait (ms)", description = "How long a request waits for an upper "
                + "layer (the RNBD server) while there is none, e.g. while its bundle restarts; then it fails with "
                + "ENODEV. 0 = fail at once.")
        long upper_wait_ms() default 30000;

        @AttributeDefinition(name = "Handshake timeout (ms)", description = "How long a path may take from its connect "
                + "request to its INFO_REQ (all connections up, authentication done) before the server closes it "
                + "(100..600000). Default 10000.")
        long handshake_timeout_ms() default ServerConfig.DEFAULT_HANDSHAKE_TIMEOUT_MS;

        @AttributeDefinition(name = "Half-open paths per source", description = "How many paths from one source address "
                + "may be in their handshake at once; a connect request for one more new path is refused with EAGAIN "
                + "(clients retry). Default 16.")
        int max_half_open_per_source() default ServerConfig.DEFAULT_MAX_HALF_OPEN_PER_SOURCE;

        @AttributeDefinition(name = "Authentication method", description = "rtrs.auth of the authenticator new paths must pass (none, chap). Empty = the highest-ranked authenticator present (none present = no authentication). A configured method whose bundle is not running refuses new paths with EAGAIN (retried) until it is.")
        String auth_method() default "";
    }

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "rtrs-server-timer");
        t.setDaemon(true);
        return t;
    });
    private final Ranked<RtrsServerOps> ops = new Ranked<>();
    private final Ranked<Authenticator> auths = new Ranked<>();
    /** The sessions' queue depths and chunk sizes, handed from each server to the next (see {@link #modified}). */
    private final SessionLimits limits = new SessionLimits();
    private volatile RtrsServer server;
    private ServerConfig sc;
    private volatile String authMethod;
    private BundleContext context;
    private ServiceRegistration<?> registration;
    private ServiceRegistration<?> adminRegistration;

    /** Only setAuthMethod needs it: the server runs without (an optional, dynamic reference). */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile ConfigurationAdmin configAdmin;

    @Activate
    public RtrsServerComponent(Config cfg) {
        try {
            sc = serverConfig(cfg);
        } catch (IllegalArgumentException e) {
            timer.shutdownNow();
            throw e;
        }
        authMethod = cfg.auth_method();
        server = newServer();
    }

    private static ServerConfig serverConfig(Config cfg) {
        return new ServerConfig(cfg.port(), cfg.chunk_size(), cfg.queue_depth(), cfg.always_invalidate(),
                cfg.hb_interval_ms(), cfg.hb_missed_max(), cfg.upper_wait_ms(), cfg.handshake_timeout_ms(),
                cfg.max_half_open_per_source());
    }

    private RtrsServer newServer() {
        return new RtrsServer(sc, ops::best, () -> Authenticators.select(auths.all(), authMethod), timer,
                System::nanoTime, limits);
    }

    /**
     * A new configuration. queue.depth and chunk.size alone apply to new sessions while
     * everything runs on: a mapped Linux client, whose rtrs-clt stops reconnecting for good
     * when its session's queue depth changes, keeps its own across reconnects and across
     * this server being rebuilt ({@link SessionLimits}). An authentication method alone
     * applies to new paths. Anything else rebuilds the server, as a restart would: every path
     * drops and reconnects.
     */
    @Modified
    void modified(Config cfg) {
        ServerConfig next = serverConfig(cfg);
        authMethod = cfg.auth_method();
        ServerConfig sameLimits = new ServerConfig(next.port(), sc.chunkSize(), sc.queueDepth(),
                next.alwaysInvalidate(), next.hbIntervalMs(), next.hbMissedMax(), next.upperWaitMs(),
                next.handshakeTimeoutMs(), next.maxHalfOpenPerSource());
        if (sameLimits.equals(sc)) {
            server.newSessionLimits(next.queueDepth(), next.chunkSize());
            sc = next;
            return;
        }
        sc = next;
        unregister();
        server.close();
        server = newServer();
        if (context != null) {
            register(context);
        }
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void bindOps(RtrsServerOps o, Map<String, Object> props) {
        ops.put(o, props);
        upperLayerChanged();
    }

    void updatedOps(RtrsServerOps o, Map<String, Object> props) {
        ops.put(o, props);
        upperLayerChanged();
    }

    void unbindOps(RtrsServerOps o) {
        ops.remove(o);
    }

    /** Requests that waited while there was no upper layer go to the new one (SCR binds after construction). */
    private void upperLayerChanged() {
        server.upperLayerChanged();
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void bindAuthenticator(Authenticator a, Map<String, Object> props) {
        auths.put(a, props);
    }

    void updatedAuthenticator(Authenticator a, Map<String, Object> props) {
        auths.put(a, props);
    }

    void unbindAuthenticator(Authenticator a) {
        auths.remove(a);
    }

    /**
     * Registers the server itself as the device registry's IB client, and its admin, once the
     * upper layers and authenticators present are bound (DS binds them after the constructor,
     * before this): a device handed over at once is listened on by a server that already knows
     * which authenticator new paths must pass.
     */
    @Activate
    void register(BundleContext context) {
        this.context = context;
        registration = context.registerService(IbClient.class.getName(), server, null);
        adminRegistration = context.registerService(RtrsServerAdmin.class.getName(), new ServerAdmin(server,
                () -> auths.all().stream().map(Authenticator::method).toList(), () -> configAdmin), null);
    }

    private void unregister() {
        unregister(adminRegistration);
        adminRegistration = null;
        unregister(registration);
        registration = null;
    }

    private static void unregister(ServiceRegistration<?> r) {
        if (r != null) {
            try {
                r.unregister();
            } catch (IllegalStateException alreadyGone) {
                // the bundle is stopping and the framework withdrew it first
            }
        }
    }

    /** The registry removes every device from the server first (its IB client goes), then the server closes. */
    @Deactivate
    void deactivate() throws InterruptedException {
        unregister();
        server.close();
        timer.shutdownNow();
        timer.awaitTermination(5, TimeUnit.SECONDS);
    }

    /** The server (for tests). */
    RtrsServer server() {
        return server;
    }
}

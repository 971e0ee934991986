package io.rnbd.rnbd.server.internal.osgi;

import io.rnbd.common.Provider;
import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rnbd.server.internal.RnbdServer;
import io.rnbd.rtrs.api.RtrsServerOps;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.osgi.annotation.bundle.Capability;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds the RNBD server, feeds it exports and backends as they come and go, and registers
 * the server itself as the RTRS server's upper layer ({@link RtrsServerOps}): no component
 * class sits between an RNBD request and {@link RnbdServer#onRequest}; and its admin face
 * {@link ServerAdmin} as {@link RnbdServerAdmin} (the server's view, and export-add/remove
 * over ConfigAdmin). Its own settings under the singleton PID {@code io.rnbd.server}.
 */
// DS no longer declares the services it does not register: say so here, so bundles that need
// them (the console, telemetry) still resolve where service requirements are enforced.
@Capability(namespace = "osgi.service", attribute = "objectClass:List<String>=\"io.rnbd.rtrs.api.RtrsServerOps,"
        + "io.rnbd.rnbd.api.RnbdServerAdmin\"", uses = {RtrsServerOps.class, RnbdServerAdmin.class})
@Component(immediate = true, service = {}, configurationPid = "io.rnbd.server",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = RnbdServerComponent.Config.class)
public final class RnbdServerComponent {
    private static final Logger LOG = LoggerFactory.getLogger(RnbdServerComponent.class);

    @ObjectClassDefinition(name = "RNBD server", description = "How OPEN requests find exports.")
    public @interface Config {
        @AttributeDefinition(name = "Device search path", description = "Linux rnbd-server's dev_search_path: an "
                + "OPEN's device name is looked up at <path>/<name> (duplicate slashes squeezed), %SESSNAME% standing "
                + "for the client's session name (what follows it is dropped, as in Linux). An export is published "
                + "at its 'path', by default /<name>.")
        String dev_search_path() default "/";

        @AttributeDefinition(name = "Backend timeout (ms)", description = "How long a backend may hold one request "
                + "before it is reported slow (counted in the export's timeouts, logged, the export's last error); "
                + "0 = never. The request is still answered only when the backend gives it back, as Linux's "
                + "rnbd-server waits for its bio: its data is the RTRS chunk, which an earlier answer would hand "
                + "back to the client while the backend still reads or writes it. Below the client's 30 s request "
                + "timeout by default, so the export shows why before the client fails the path.")
        long backend_timeout_ms() default 25000;

        @AttributeDefinition(name = "Open grace (ms)", description = "For this long after the server starts, an "
                + "OPEN of an export that is not there waits for the exports still arriving (each is a configuration "
                + "of its own, activated after the server) instead of being answered ENOENT: clients re-opening "
                + "their devices after a restart of this bundle must not be told their export is gone; 0 = no wait.")
        long open_grace_ms() default 10000;

        @AttributeDefinition(name = "Open retry (ms)", description = "How often an export whose backend is there but "
                + "failed to open it (a file that does not exist yet, an unreachable cluster) is opened again, so it "
                + "comes online without a configuration change; 0 = only when its configuration or backend changes.")
        long open_retry_ms() default 5000;

        @AttributeDefinition(name = "Server name", description = "This server's name where several servers export "
                + "the same storage (ha = true): recorded with the storage when this server takes it over, shown as "
                + "the active server by every server and client; empty = the host name. No spaces.")
        String server_name() default "";

        @AttributeDefinition(name = "Takeover hold-off (ms)", description = "A takeover of a storage that a server "
                + "took over less than this long ago is refused (EBUSY) and its client waits: two clients that each "
                + "lost a different server cannot move the storage back and forth more often than this.")
        long ha_holdoff_ms() default 10000;

        @AttributeDefinition(name = "Storage probe (ms)", description = "How often an export of several servers "
                + "asks the storage who holds it: an active server that was fenced while idle learns it within this "
                + "(one request to the storage each); 0 = only when its IO fails.")
        long ha_probe_ms() default 1000;
    }

    private final ScheduledExecutorService scheduler;
    private final RnbdServer server;
    private final BooleanSupplier bundleStopping;
    /** The server as the RTRS server's upper layer; null where no framework registered it (tests). */
    private ServiceRegistration<?> registration;
    /** Its admin face ({@link ServerAdmin}); null where no framework registered it (tests). */
    private ServiceRegistration<?> adminRegistration;

    /**
     * Registers the server once it has its settings. SCR binds the exports and backends after
     * this returns: an OPEN that comes before its export waits for it (open.grace.ms).
     */
    @Activate
    public RnbdServerComponent(Config cfg, BundleContext context, Map<String, Object> properties,
                               @Reference ConfigurationAdmin configAdmin) {
        this(cfg, () -> context.getBundle().getState() == Bundle.STOPPING);
        try {
            registration = context.registerService(RtrsServerOps.class.getName(), server,
                    serviceProperties(properties));
            adminRegistration = context.registerService(RnbdServerAdmin.class.getName(),
                    new ServerAdmin(server, configAdmin), null);
        } catch (RuntimeException e) {
            unregister(registration);
            server.close();
            scheduler.shutdownNow();
            throw e;
        }
    }

    /** @param bundleStopping whether this bundle is stopping (see {@link #unbindExport}) */
    RnbdServerComponent(Config cfg, BooleanSupplier bundleStopping) {
        this.bundleStopping = bundleStopping;
        scheduler = RnbdServer.newScheduler("rnbd-server-timer");
        server = new RnbdServer(scheduler);
        try {
            server.devSearchPath(cfg.dev_search_path());
            server.backendTimeoutMs(cfg.backend_timeout_ms());
            server.openGraceMs(cfg.open_grace_ms());
            server.openRetryMs(cfg.open_retry_ms());
            ha(cfg);
        } catch (IllegalArgumentException e) {
            scheduler.shutdownNow();
            throw e;
        }
    }

    /**
     * What SCR would have published for a service of this component: its properties but the
     * private ones (a leading dot). The RTRS server ranks upper layers by service.ranking.
     */
    static Dictionary<String, Object> serviceProperties(Map<String, Object> properties) {
        Hashtable<String, Object> out = new Hashtable<>();
        properties.forEach((k, v) -> {
            if (!k.startsWith(".") && v != null) {
                out.put(k, v);
            }
        });
        return out;
    }

    private void ha(Config cfg) {
        if (!cfg.server_name().isBlank()) {
            server.serverName(cfg.server_name());
        }
        server.haHoldoffMs(cfg.ha_holdoff_ms());
        server.haProbeMs(cfg.ha_probe_ms());
    }

    @Modified
    void modified(Config cfg, Map<String, Object> properties) {
        server.devSearchPath(cfg.dev_search_path());
        server.backendTimeoutMs(cfg.backend_timeout_ms());
        server.openRetryMs(cfg.open_retry_ms());
        ha(cfg);
        if (registration != null) {
            registration.setProperties(serviceProperties(properties));
        }
        // the settings in effect now: ConfigAdmin has a change before this component does
        // (SCR hands it over on ConfigAdmin's event thread), and an operator wants to see it taken
        LOG.info("OPEN looks for exports under {}; backend timeout {} ms; takeover hold-off {} ms, storage probe {} ms",
                cfg.dev_search_path(), cfg.backend_timeout_ms(), cfg.ha_holdoff_ms(), cfg.ha_probe_ms());
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void bindBackend(BlockBackend backend, Map<String, Object> props, ServiceReference<BlockBackend> ref) {
        String type = type(backend, props);
        Bundle b = ref.getBundle();
        server.backendAdded(type, backend, b == null ? null
                : new Provider(type, b.getSymbolicName(), b.getVersion().toString(), b.getBundleId(),
                        props.get("service.ranking") instanceof Integer r ? r : 0));
    }

    void unbindBackend(BlockBackend backend, Map<String, Object> props) {
        server.backendRemoved(type(backend, props), backend);
    }

    private static String type(BlockBackend backend, Map<String, Object> props) {
        Object t = props.get(BlockBackend.PROP_TYPE);
        return t != null ? t.toString() : backend.type();
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void bindExport(ExportComponent export) {
        try {
            server.addExport(export.config());
        } catch (IllegalStateException e) {
            LOG.error("{}: configuration ignored", e.getMessage());
        }
    }

    void unbindExport(ExportComponent export) {
        if (bundleStopping.getAsBoolean()) {
            // The bundle stops: its export components go before this one, and until this one
            // is deactivated requests still arrive, among them the OPENs of clients re-opening
            // what the server forgot. An export removed now answers them ENOENT and fails their
            // devices for good; kept, it goes with the server in deactivate, and the restarted
            // server gets it back (its OPENs wait for it, open.grace.ms).
            return;
        }
        server.removeExport(export.config().name());
    }

    /** The server inside (for tests). */
    RnbdServer server() {
        return server;
    }

    /** No new request reaches the server once it is unregistered; then it closes. */
    @Deactivate
    void deactivate() throws InterruptedException {
        unregister(adminRegistration);
        unregister(registration);
        server.close();
        scheduler.shutdownNow();
        scheduler.awaitTermination(10, TimeUnit.SECONDS);
    }

    private static void unregister(ServiceRegistration<?> r) {
        if (r != null) {
            try {
                r.unregister();
            } catch (IllegalStateException gone) {
                // the framework took it already
            }
        }
    }
}

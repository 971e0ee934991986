package io.rnbd.rnbd.client.internal.osgi;

import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.client.internal.RnbdClient;
import io.rnbd.rtrs.api.RtrsClientSession;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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

/**
 * The RNBD client's glue: builds the {@link RnbdClient} and registers the
 * {@link RnbdClientAdmin} service ({@link ClientAdmin}: the client's own view and run-time
 * calls, and the operator's map/unmap/remap/resize over ConfigAdmin), follows RTRS client
 * sessions as they come and go, and has every mapped device registered as a
 * {@link RemoteBlockDevice} service ({@link DeviceServices}).
 */
// DS no longer declares the admin it does not register: say it here, so a bundle that needs
// it (MapComponent, the console) still resolves where service requirements are enforced.
@Capability(namespace = "osgi.service", attribute = "objectClass:List<String>=io.rnbd.rnbd.api.RnbdClientAdmin",
        uses = RnbdClientAdmin.class)
@Component(immediate = true, service = {}, configurationPid = "io.rnbd.client",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = RnbdClientComponent.Config.class)
public final class RnbdClientComponent {
    @ObjectClassDefinition(name = "RNBD client", description = "Settings of the RNBD client's mapped devices.")
    public @interface Config {
        @AttributeDefinition(name = "Size refresh (ms)", description = "How often every mapped device asks its server "
                + "for the export's size (an OPEN of the open export, which Linux's rnbd-server answers too) and "
                + "adopts it, so an export grown on the server reaches the device and the NBD gateway without a "
                + "remap; 0 = only on rnbd:resize or IO beyond the known end.")
        long size_refresh_ms() default 5000;

        @AttributeDefinition(name = "IO timeout over several servers (ms)", description = "How long IO of a device "
                + "mapped over several servers (session.name a comma list) waits for one of them to be active "
                + "before it fails with EIO: the time to detect the loss of the active one, its takeover, and a "
                + "takeover the servers hold off (ha.holdoff.ms, 10 s) must fit in it: a frozen server is found "
                + "after up to hb.interval.ms x (hb.missed.max + 1) of its session, 30 s with the defaults.")
        long ha_io_timeout_ms() default 60000;
    }

    private final ScheduledExecutorService scheduler;
    private final DeviceServices devices;
    private final RnbdClient client;
    private final ServiceRegistration<RnbdClientAdmin> registration;

    /** The timer's threads (one at a time), joined when the component stops. */
    private final List<Thread> timerThreads = new CopyOnWriteArrayList<>();

    @Activate
    public RnbdClientComponent(BundleContext context, Config cfg, @Reference ConfigurationAdmin configAdmin) {
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rnbd-client-timer");
            t.setDaemon(true);
            timerThreads.add(t);
            return t;
        });
        try {
            this.devices = new DeviceServices(context);
            this.client = new RnbdClient(devices, scheduler, cfg.size_refresh_ms());
            client.haIoTimeoutMs(cfg.ha_io_timeout_ms());
            this.registration = context.registerService(RnbdClientAdmin.class, new ClientAdmin(client, configAdmin),
                    null);
        } catch (RuntimeException e) {
            scheduler.shutdownNow();
            throw e;
        }
    }

    /** A changed setting must not unmap anything: applied in place. */
    @Modified
    void modified(Config cfg) {
        client.sizeRefreshMs(cfg.size_refresh_ms());
        client.haIoTimeoutMs(cfg.ha_io_timeout_ms());
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void bindSession(RtrsClientSession session) {
        client.sessionAdded(session);
    }

    void unbindSession(RtrsClientSession session) {
        client.sessionRemoved(session);
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        // The admin goes first, as when DS registered it: its users (the mappings of
        // MapComponent) let go and unmap before the client closes.
        DeviceServices.unregister(registration);
        devices.close();
        client.close();
        scheduler.shutdownNow();
        // a stopped bundle leaves no thread behind; a refresh under way ends with its OPEN
        scheduler.awaitTermination(10, TimeUnit.SECONDS);
        // a terminated pool's worker may still be leaving run(): wait for it to be gone too
        for (Thread t : timerThreads) {
            t.join(10_000);
        }
        devices.withdrawAll();
    }
}

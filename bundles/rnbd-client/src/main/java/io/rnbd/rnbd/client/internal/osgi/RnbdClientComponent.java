package io.rnbd.rnbd.client.internal.osgi;

import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.client.DevicePublisher;
import io.rnbd.rnbd.client.RnbdClient;
import io.rnbd.rnbd.client.RnbdClientDevice;
import io.rnbd.rtrs.api.RtrsClientSession;
import java.io.IOException;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * The RNBD client: follows RTRS client sessions as they come and go, and registers every
 * mapped device as a {@link RemoteBlockDevice} service with {@code rnbd.device=<name>}.
 */
@Component(immediate = true, service = RnbdClientAdmin.class, configurationPid = "io.rnbd.client",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = RnbdClientComponent.Config.class)
public final class RnbdClientComponent implements RnbdClientAdmin, DevicePublisher {
    @ObjectClassDefinition(name = "RNBD client", description = "Settings of the RNBD client's mapped devices.")
    public @interface Config {
        @AttributeDefinition(name = "Size refresh (ms)", description = "How often every mapped device asks its server "
                + "for the export's size (an OPEN of the open export, which Linux's rnbd-server answers too) and "
                + "adopts it, so an export grown on the server reaches the device and the NBD gateway without a "
                + "remap; 0 = only on rnbd:resize or IO beyond the known end.")
        long size_refresh_ms() default 5000;
    }

    private final BundleContext context;
    private final ScheduledExecutorService scheduler;
    private final Map<RnbdClientDevice, ServiceRegistration<RemoteBlockDevice>> registrations =
            new ConcurrentHashMap<>();
    private final RnbdClient client;
    private volatile boolean closed;

    @Activate
    public RnbdClientComponent(BundleContext context, Config cfg) {
        this.context = context;
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rnbd-client-timer");
            t.setDaemon(true);
            return t;
        });
        try {
            this.client = new RnbdClient(this, scheduler, cfg.size_refresh_ms());
        } catch (IllegalArgumentException e) {
            scheduler.shutdownNow();
            throw e;
        }
    }

    /** A changed setting must not unmap anything: applied in place. */
    @Modified
    void modified(Config cfg) {
        client.sizeRefreshMs(cfg.size_refresh_ms());
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
        closed = true;
        client.close();
        scheduler.shutdownNow();
        // a stopped bundle leaves no thread behind; a refresh under way ends with its OPEN
        scheduler.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS);
        registrations.keySet().forEach(this::withdraw);
    }

    @Override
    public void publish(RnbdClientDevice device) {
        if (closed) {
            return;
        }
        Hashtable<String, Object> props = new Hashtable<>();
        props.put(RemoteBlockDevice.PROP_NAME, device.name());
        props.put("rnbd.export", device.exportName());
        props.put(RtrsClientSession.PROP_SESSION, device.sessionName());
        registrations.put(device, context.registerService(RemoteBlockDevice.class, device, props));
    }

    @Override
    public void withdraw(RnbdClientDevice device) {
        ServiceRegistration<RemoteBlockDevice> reg = registrations.remove(device);
        if (reg != null) {
            try {
                reg.unregister();
            } catch (IllegalStateException alreadyGone) {
                // the bundle is stopping and the framework unregistered it first
            }
        }
    }

    @Override
    public List<DeviceInfo> devices() {
        return client.devices();
    }

    @Override
    public CompletableFuture<RemoteBlockDevice> map(String device, String session, String export, AccessMode mode)
            throws IOException {
        return client.map(device, session, export, mode);
    }

    @Override
    public void unmap(String device, boolean force) throws IOException {
        client.unmap(device, force);
    }

    @Override
    public CompletableFuture<RemoteBlockDevice> remap(String device) throws IOException {
        return client.remap(device);
    }

    @Override
    public CompletableFuture<Long> resize(String device) throws IOException {
        return client.resize(device);
    }
}

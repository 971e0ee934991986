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
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * The RNBD client: follows RTRS client sessions as they come and go, and registers every
 * mapped device as a {@link RemoteBlockDevice} service with {@code rnbd.device=<name>}.
 */
@Component(immediate = true, service = RnbdClientAdmin.class)
public final class RnbdClientComponent implements RnbdClientAdmin, DevicePublisher {
    private final BundleContext context;
    private final Map<RnbdClientDevice, ServiceRegistration<RemoteBlockDevice>> registrations =
            new ConcurrentHashMap<>();
    private final RnbdClient client;
    private volatile boolean closed;

    @Activate
    public RnbdClientComponent(BundleContext context) {
        this.context = context;
        this.client = new RnbdClient(this);
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
    void deactivate() {
        closed = true;
        client.close();
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

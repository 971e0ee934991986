package io.rnbd.rnbd.client.internal.osgi;

import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.client.internal.DevicePublisher;
import io.rnbd.rtrs.api.RtrsClientSession;
import java.util.Hashtable;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.osgi.annotation.bundle.Capability;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;

/**
 * Registers every mapped device as a {@link RemoteBlockDevice} service with
 * {@code rnbd.device=<name>}: the device object itself, so IO from its users (the NBD
 * gateway, the console's bench) goes straight to the domain object.
 */
// One service per mapped device, registered at run time: DS does not declare it, so it is said
// here, where it is registered, so that a bundle requiring it resolves where Karaf enforces
// service requirements.
@Capability(namespace = "osgi.service", attribute = "objectClass:List<String>=io.rnbd.rnbd.api.RemoteBlockDevice",
        uses = RemoteBlockDevice.class)
final class DeviceServices implements DevicePublisher {
    private final BundleContext context;
    private final Map<RemoteBlockDevice, ServiceRegistration<RemoteBlockDevice>> registrations =
            new ConcurrentHashMap<>();
    private volatile boolean closed;

    DeviceServices(BundleContext context) {
        this.context = context;
    }

    @Override
    public void publish(RemoteBlockDevice device) {
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
    public void withdraw(RemoteBlockDevice device) {
        unregister(registrations.remove(device));
    }

    /** The client is closing: register nothing more. */
    void close() {
        closed = true;
    }

    /** What the client's close left registered. */
    void withdrawAll() {
        registrations.keySet().forEach(this::withdraw);
    }

    static void unregister(ServiceRegistration<?> reg) {
        if (reg != null) {
            try {
                reg.unregister();
            } catch (IllegalStateException alreadyGone) {
                // the bundle is stopping and the framework unregistered it first
            }
        }
    }
}

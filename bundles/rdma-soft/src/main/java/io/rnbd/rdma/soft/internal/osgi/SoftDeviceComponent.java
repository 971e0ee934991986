package io.rnbd.rdma.soft.internal.osgi;

import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.soft.internal.SoftDevice;

import org.osgi.annotation.bundle.Capability;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

import java.util.Hashtable;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One soft RDMA device per {@code io.rnbd.rdma.soft} factory configuration (the
 * {@code rdma link add} of siw/rxe). The service is registered by hand so that removal
 * can unregister it — letting every IB client let go — before the device is flushed.
 */
// Registered by hand, so DS does not declare it: said here, so that a bundle requiring it
// resolves where Karaf enforces service requirements.
@Capability(namespace = "osgi.service", attribute = {"objectClass:List<String>=io.rnbd.rdma.api.RdmaDevice",
        "rdma.provider=soft"}, uses = io.rnbd.rdma.api.RdmaDevice.class)
@Component(configurationPid = SoftDeviceComponent.PID, configurationPolicy = ConfigurationPolicy.REQUIRE,
        immediate = true, service = {})
@Designate(ocd = SoftDeviceComponent.Config.class, factory = true)
public final class SoftDeviceComponent {
    public static final String PID = "io.rnbd.rdma.soft";
    private static final Set<String> ACTIVE_NAMES = ConcurrentHashMap.newKeySet();

    @ObjectClassDefinition(name = "RNBD soft RDMA device",
            description = "A software RDMA device over TCP bound to one local IP address (like siw/rxe).")
    public @interface Config {
        @AttributeDefinition(name = "Name", description = "Device name, unique on this host, e.g. soft0.")
        String name() default "soft0";

        @AttributeDefinition(name = "Address",
                description = "Local IP address (literal) the device listens and connects from.")
        String address() default "127.0.0.1";

        @AttributeDefinition(name = "IO threads",
                description = "Threads that move this device's traffic (1-16). Each connection lives on one; "
                        + "more than one lets the connections of a path (one per CPU) run in parallel.")
        int io_threads() default 1;

        @AttributeDefinition(name = "Busy poll (us)",
                description = "The longest an IO thread polls its connections before it sleeps (0-1000 microseconds,"
                        + " 0 = never), like net.core.busy_poll, adaptive as KVM's halt polling: the window opens while"
                        + " work keeps coming back soon after the thread went idle (queue depth 1) and closes when the"
                        + " device is idle or the work comes in batches, so an idle device never polls. A poll begins"
                        + " only while a CPU is spare and gives way when another thread needs the CPU. Default 50.")
        int poll_usec() default SoftDevice.DEFAULT_POLL_USEC;

        @AttributeDefinition(name = "Handshake timeout (ms)",
                description = "How long an accepted connection may take to send its connect request (HELLO) before "
                        + "it is closed (100-600000). Default 10000.")
        long handshake_timeout_ms() default SoftDevice.Handshake.DEFAULT_TIMEOUT_MS;

        @AttributeDefinition(name = "Half-open connections per source",
                description = "How many connections from one source address may be in the handshake (accepted, not "
                        + "yet answered) at once; more are closed at once and logged. An RTRS client opens one per "
                        + "CPU plus one per path together. Default 64.")
        int max_half_open_per_source() default SoftDevice.Handshake.DEFAULT_MAX_PER_SOURCE;
    }

    private final String name;
    private final SoftDevice device;
    private final ServiceRegistration<RdmaDevice> registration;

    @Activate
    public SoftDeviceComponent(BundleContext context, Config config) throws RdmaException {
        this.name = config.name();
        if (!ACTIVE_NAMES.add(name)) {
            throw new IllegalArgumentException("soft RDMA device name already in use: " + name);
        }
        try {
            this.device = new SoftDevice(name, SoftDevice.parseAddress(config.address()), config.io_threads(),
                    config.poll_usec(), new SoftDevice.Handshake(config.handshake_timeout_ms(),
                            config.max_half_open_per_source()));
        } catch (RdmaException | RuntimeException e) {
            ACTIVE_NAMES.remove(name);
            throw e;
        }
        Hashtable<String, Object> props = new Hashtable<>();
        props.put(RdmaDevice.PROP_NAME, name);
        props.put(RdmaDevice.PROP_PROVIDER, SoftDevice.PROVIDER);
        props.put("rdma.address", device.address().getHostAddress());
        this.registration = context.registerService(RdmaDevice.class, device, props);
    }

    @Deactivate
    void deactivate() {
        try {
            registration.unregister();
        } catch (IllegalStateException alreadyGone) {
            // the framework unregisters on bundle stop before calling us
        }
        device.close();
        ACTIVE_NAMES.remove(name);
    }
}

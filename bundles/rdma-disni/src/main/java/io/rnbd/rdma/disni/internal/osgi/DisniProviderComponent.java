package io.rnbd.rdma.disni.internal.osgi;

import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.disni.internal.DisniDevice;
import io.rnbd.rdma.disni.internal.DisniProvider;
import io.rnbd.rdma.disni.internal.DisniRuntime;
import io.rnbd.rdma.disni.internal.DisniSettings;
import io.rnbd.rdma.disni.internal.ProviderStatus;
import io.rnbd.rdma.disni.internal.SysfsScanner;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes one {@link RdmaDevice} service per adapter ({@code rdma.provider=disni},
 * {@code rdma.device=<ibdev>}) and a status service: a {@code Supplier<String>} with
 * {@code rdma.provider=disni}, {@code rdma.provider.status=true} and the properties
 * {@code rdma.provider.state} (active|dormant) and {@code rdma.provider.reason}, updated
 * as the provider wakes up or goes dormant.
 */
// Registered by hand (one device per adapter found at run time; a status whose properties change
// as the provider wakes up or goes dormant), so DS does not declare them: said here, so that a
// bundle requiring them resolves where Karaf enforces service requirements.
@Capability(namespace = "osgi.service", attribute = {"objectClass:List<String>=io.rnbd.rdma.api.RdmaDevice",
        "rdma.provider=disni"}, uses = RdmaDevice.class)
@Capability(namespace = "osgi.service", attribute = {"objectClass:List<String>=java.util.function.Supplier",
        "rdma.provider=disni"})
@Component(immediate = true, configurationPid = "io.rnbd.rdma.disni",
        configurationPolicy = ConfigurationPolicy.OPTIONAL, service = {})
@Designate(ocd = DisniProviderComponent.Config.class)
public final class DisniProviderComponent {
    private static final Logger LOG = LoggerFactory.getLogger(DisniProviderComponent.class);

    @ObjectClassDefinition(name = "RNBD DiSNI RDMA provider",
            description = "Real RDMA adapters (InfiniBand, RoCE, iWARP) through DiSNI and libdisni.so")
    public @interface Config {
        @AttributeDefinition(name = "sysfs path", description = "Directory listing the RDMA adapters")
        String sysfs_path() default "/sys/class/infiniband";

        @AttributeDefinition(name = "Poll interval (ms)", description = "How often adapters are looked for")
        long poll_interval_ms() default 2000;

        @AttributeDefinition(name = "CM timeout (ms)", description = "Address and route resolution timeout")
        int cm_timeout_ms() default 2000;

        @AttributeDefinition(name = "Completion threads",
                description = "Completion threads per adapter (1-64), each with its own completion channel; "
                        + "the adapter's connections are spread over them")
        int completion_threads() default 1;

        @AttributeDefinition(name = "Memory windows",
                description = "always_invalidate's keys: auto (memory windows, except on rxe, which runs a "
                        + "retried request's binds again: there the chunk's remote access is switched off and on), "
                        + "on (windows) or off (re-registration)")
        String memory_windows() default "auto";
    }

    private final BundleContext context;
    private final ScheduledExecutorService scheduler;
    private final DisniProvider provider;
    private final Map<RdmaDevice, ServiceRegistration<RdmaDevice>> registrations = new ConcurrentHashMap<>();
    private final ServiceRegistration<?> statusRegistration;

    @Activate
    public DisniProviderComponent(BundleContext context, Config config) {
        if (config.poll_interval_ms() <= 0 || config.cm_timeout_ms() <= 0) {
            throw new IllegalArgumentException("poll.interval.ms and cm.timeout.ms must be positive");
        }
        if (config.completion_threads() < 1 || config.completion_threads() > DisniSettings.MAX_COMPLETION_THREADS) {
            throw new IllegalArgumentException("completion.threads must be 1-" + DisniSettings.MAX_COMPLETION_THREADS
                    + ": " + config.completion_threads());
        }
        DisniSettings.MemoryWindows windows = DisniSettings.MemoryWindows.parse(config.memory_windows());
        this.context = context;
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rdma-disni-scan");
            t.setDaemon(true);
            return t;
        });
        DisniSettings settings = new DisniSettings(config.cm_timeout_ms(), config.completion_threads(), windows);
        this.provider = new DisniProvider(new SysfsScanner(Path.of(config.sysfs_path())), new DisniRuntime(),
                info -> DisniDevice.open(info, settings), new Listener(), scheduler,
                Duration.ofMillis(config.poll_interval_ms()));
        Supplier<String> status = () -> provider.status().line();
        this.statusRegistration = context.registerService(Supplier.class.getName(), status,
                statusProperties(provider.status()));
        provider.start();
    }

    /** Why the provider has no device ("" when it is active), for admin tools. */
    public String dormantReason() {
        ProviderStatus s = provider.status();
        return s.active() ? "" : s.reason();
    }

    private static Dictionary<String, Object> statusProperties(ProviderStatus s) {
        Hashtable<String, Object> p = new Hashtable<>();
        p.put(RdmaDevice.PROP_PROVIDER, "disni");
        p.put("rdma.provider.status", Boolean.TRUE);
        p.put("rdma.provider.state", s.active() ? "active" : "dormant");
        p.put("rdma.provider.reason", s.reason());
        return p;
    }

    private final class Listener implements io.rnbd.rdma.disni.internal.DeviceListener {
        @Override
        public void deviceAdded(RdmaDevice device) {
            Hashtable<String, Object> p = new Hashtable<>();
            p.put(RdmaDevice.PROP_PROVIDER, "disni");
            p.put(RdmaDevice.PROP_NAME, device.name());
            registrations.put(device, context.registerService(RdmaDevice.class, device, p));
        }

        @Override
        public void deviceRemoved(RdmaDevice device) {
            ServiceRegistration<RdmaDevice> r = registrations.remove(device);
            if (r != null) {
                try {
                    r.unregister();
                } catch (IllegalStateException e) {
                    LOG.debug("rdma-disni: {} already unregistered", device.name());
                }
            }
        }

        @Override
        public void statusChanged(ProviderStatus status) {
            try {
                ServiceRegistration<?> r = statusRegistration;
                if (r != null) {
                    r.setProperties(statusProperties(status));
                }
            } catch (IllegalStateException e) {
                LOG.debug("rdma-disni: status service already gone");
            }
        }
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        scheduler.submit(provider::close);
        scheduler.shutdown();
        if (!scheduler.awaitTermination(30, TimeUnit.SECONDS)) {
            LOG.warn("rdma-disni: device flush did not finish in 30 s");
            scheduler.shutdownNow();
        }
        provider.close();
        statusRegistration.unregister();
    }
}

package io.rnbd.rtrs.client.internal.osgi;

import io.rnbd.rdma.api.IbClient;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.Authenticators;
import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.api.Ranked;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.client.internal.RtrsClient;
import org.osgi.annotation.bundle.Capability;
import io.rnbd.common.Provider;
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

import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The RTRS client in OSGi: builds the {@link RtrsClient} and its timer thread, and registers
 * the domain objects themselves, no forwarding component between: the client's device set
 * as the {@link IbClient} the device registry hands devices to, the client as
 * {@link RtrsClient} (for this bundle's {@link ClientSessionComponent}s); and the
 * {@link RtrsClientAdmin} of the console, JMX and telemetry ({@link ClientAdmin}: the client's
 * own view and operations, and setAuthMethod over ConfigAdmin). Tracks the authenticator and
 * multipath policy services and ConfigAdmin (dynamic, greedy).
 */
// Registered by hand, so DS does not declare it: said here, so that a bundle requiring it
// resolves where Karaf enforces service requirements.
@Capability(namespace = "osgi.service", attribute = "objectClass:List<String>=io.rnbd.rdma.api.IbClient", uses = IbClient.class)
@Capability(namespace = "osgi.service", attribute = "objectClass:List<String>=io.rnbd.rtrs.api.RtrsClientAdmin", uses = RtrsClientAdmin.class)
@Capability(namespace = "osgi.service", attribute = "objectClass:List<String>=io.rnbd.rtrs.client.internal.RtrsClient", uses = RtrsClient.class)
@Component(configurationPid = "io.rnbd.rtrs.client", configurationPolicy = ConfigurationPolicy.OPTIONAL,
        service = {}, immediate = true)
@Designate(ocd = RtrsClientComponent.Config.class)
public final class RtrsClientComponent {
    @ObjectClassDefinition(name = "RTRS client", description = "Settings shared by every RTRS client session.")
    public @interface Config {
        @AttributeDefinition(name = "Authentication method", description = "rtrs.auth of the authenticator new paths use when the server asks for authentication (none, chap). Empty = the highest-ranked authenticator present. A configured method whose bundle is not running fails connection attempts with EAGAIN (retried) until it is.")
        String auth_method() default "";
    }

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "rtrs-client-timer");
        t.setDaemon(true);
        return t;
    });
    private final RtrsClient client = new RtrsClient(timer, System::nanoTime);
    private final Ranked<Authenticator> auths = new Ranked<>();
    private final Ranked<MultipathPolicy> policies = new Ranked<>();
    private volatile String authMethod = "";
    private ServiceRegistration<IbClient> ibClient;
    private ServiceRegistration<RtrsClient> sessions;
    private ServiceRegistration<RtrsClientAdmin> admin;

    /** Only setAuthMethod needs it: the client runs without (an optional, dynamic reference). */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile ConfigurationAdmin configAdmin;

    /**
     * Registers once the authenticators and policies present are bound: DS binds them after
     * construction and before this method, so this is no {@code @Activate} constructor. A
     * session opened as soon as the services appear thus sees them (with an authenticator
     * bound late, its first AUTH could fail with ENOKEY, which is not retried).
     */
    @Activate
    void activate(BundleContext context, Config cfg) {
        modified(cfg);
        ibClient = context.registerService(IbClient.class, client.devices(), null);
        sessions = context.registerService(RtrsClient.class, client, null);
        admin = context.registerService(RtrsClientAdmin.class, new ClientAdmin(client, () -> configAdmin), null);
    }

    @Modified
    void modified(Config cfg) {
        authMethod = cfg.auth_method();
        client.authenticator(Authenticators.select(auths.all(), authMethod));
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void bindAuthenticator(Authenticator a, Map<String, Object> props, ServiceReference<Authenticator> ref) {
        auths.put(a, props, provider(Authenticator.PROP_METHOD, props, ref));
        authenticatorsChanged();
    }

    void updatedAuthenticator(Authenticator a, Map<String, Object> props, ServiceReference<Authenticator> ref) {
        bindAuthenticator(a, props, ref);
    }

    void unbindAuthenticator(Authenticator a) {
        auths.remove(a);
        authenticatorsChanged();
    }

    private void authenticatorsChanged() {
        client.authenticators(auths.providers());
        client.authenticator(Authenticators.select(auths.all(), authMethod));
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void bindPolicy(MultipathPolicy p, Map<String, Object> props, ServiceReference<MultipathPolicy> ref) {
        policies.put(p, props, provider(MultipathPolicy.PROP_NAME, props, ref));
        client.policyServices(policies.entries());
    }

    void updatedPolicy(MultipathPolicy p, Map<String, Object> props, ServiceReference<MultipathPolicy> ref) {
        bindPolicy(p, props, ref);
    }

    void unbindPolicy(MultipathPolicy p) {
        policies.remove(p);
        client.policyServices(policies.entries());
    }

    /** The service as the console lists it: the name in {@code key}, and its bundle. */
    static Provider provider(String key, Map<String, Object> props, ServiceReference<?> ref) {
        Bundle b = ref.getBundle();
        return b == null ? Provider.of(key, props, "", "", -1) // unregistered meanwhile
                : Provider.of(key, props, b.getSymbolicName(), b.getVersion().toString(), b.getBundleId());
    }

    /** Sessions go first (their components close them), then the devices, then the client and its timer. */
    @Deactivate
    void deactivate() throws InterruptedException {
        admin.unregister();
        sessions.unregister();
        ibClient.unregister();
        client.close();
        timer.shutdownNow();
        timer.awaitTermination(5, TimeUnit.SECONDS);
    }
}

package io.rnbd.rtrs.client.internal.osgi;

import io.rnbd.rtrs.api.Ranked;
import io.rnbd.rdma.api.IbClient;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.Authenticators;
import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.client.RtrsClient;
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

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The RTRS client in OSGi: the IB client the device registry hands devices to, the admin
 * service for console commands, and the owner of every session's timer thread. Tracks
 * the authenticator and multipath policy services (dynamic, greedy).
 */
@Component(configurationPid = "io.rnbd.rtrs.client", configurationPolicy = ConfigurationPolicy.OPTIONAL,
        service = {IbClient.class, RtrsClientAdmin.class, RtrsClientComponent.class}, immediate = true)
@Designate(ocd = RtrsClientComponent.Config.class)
public final class RtrsClientComponent implements IbClient, RtrsClientAdmin {
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

    @Activate
    public RtrsClientComponent(Config cfg) {
        authMethod = cfg.auth_method();
    }

    @Modified
    void modified(Config cfg) {
        authMethod = cfg.auth_method();
        client.authenticator(Authenticators.select(auths.all(), authMethod));
    }

    RtrsClient client() {
        return client;
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void bindAuthenticator(Authenticator a, Map<String, Object> props) {
        auths.put(a, props);
        client.authenticator(Authenticators.select(auths.all(), authMethod));
    }

    void updatedAuthenticator(Authenticator a, Map<String, Object> props) {
        bindAuthenticator(a, props);
    }

    void unbindAuthenticator(Authenticator a) {
        auths.remove(a);
        client.authenticator(Authenticators.select(auths.all(), authMethod));
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void bindPolicy(MultipathPolicy p, Map<String, Object> props) {
        policies.put(p, props);
        client.policies(policies.all());
    }

    void updatedPolicy(MultipathPolicy p, Map<String, Object> props) {
        bindPolicy(p, props);
    }

    void unbindPolicy(MultipathPolicy p) {
        policies.remove(p);
        client.policies(policies.all());
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        client.close();
        timer.shutdownNow();
        timer.awaitTermination(5, TimeUnit.SECONDS);
    }

    @Override
    public String clientName() {
        return "rtrs-client";
    }

    @Override
    public void add(RdmaDevice device) {
        client.devices().add(device);
    }

    @Override
    public void remove(RdmaDevice device) {
        client.devices().remove(device);
    }

    @Override
    public List<RtrsClientSessionInfo> sessions() {
        return client.sessions();
    }

    @Override
    public Optional<RtrsClientSessionInfo> session(String name) {
        return client.session(name);
    }

    @Override
    public void addPath(String session, String path) {
        client.addPath(session, path);
    }

    @Override
    public void removePath(String session, String path) {
        client.removePath(session, path);
    }

    @Override
    public void reconnectPath(String session, String path) {
        client.reconnectPath(session, path);
    }

    @Override
    public void disconnectPath(String session, String path) {
        client.disconnectPath(session, path);
    }

    @Override
    public void setMpPolicy(String session, String policy) {
        client.setMpPolicy(session, policy);
    }

    @Override
    public void setMaxReconnectAttempts(String session, int attempts) {
        client.setMaxReconnectAttempts(session, attempts);
    }

    @Override
    public void resetStats(String session) {
        client.resetStats(session);
    }
}

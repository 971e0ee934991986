package io.rnbd.rtrs.client.internal.osgi;

import io.rnbd.rdma.api.IbClient;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.client.RtrsClient;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

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
@Component(service = {IbClient.class, RtrsClientAdmin.class, RtrsClientComponent.class}, immediate = true)
public final class RtrsClientComponent implements IbClient, RtrsClientAdmin {
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "rtrs-client-timer");
        t.setDaemon(true);
        return t;
    });
    private final RtrsClient client = new RtrsClient(timer, System::nanoTime);
    private final Ranked<Authenticator> auths = new Ranked<>();
    private final Ranked<MultipathPolicy> policies = new Ranked<>();

    @Activate
    public RtrsClientComponent() {
    }

    RtrsClient client() {
        return client;
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void bindAuthenticator(Authenticator a, Map<String, Object> props) {
        auths.put(a, props);
        client.authenticator(auths.best());
    }

    void updatedAuthenticator(Authenticator a, Map<String, Object> props) {
        bindAuthenticator(a, props);
    }

    void unbindAuthenticator(Authenticator a) {
        auths.remove(a);
        client.authenticator(auths.best());
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

package io.rnbd.rtrs.client;

import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * The RTRS client as a whole: the devices it was given (its {@link DeviceSet} is the IB
 * client), the current authenticator and multipath policies, and its sessions by name.
 * In OSGi it is itself the {@link RtrsClientAdmin} service, and its device set the
 * {@code IbClient} service (internal.osgi.RtrsClientComponent registers them). Plain Java:
 *
 * <pre>
 *   RtrsClient client = new RtrsClient(scheduler, System::nanoTime);
 *   client.devices().add(device);                      // what the device registry does
 *   ClientSession s = client.open(ClientConfig.of("sess", List.of(PathAddress.parse("10.0.0.2", 1234))));
 *   ...
 *   client.close();
 * </pre>
 */
public final class RtrsClient implements RtrsClientAdmin, AutoCloseable {
    private final DeviceSet devices = new DeviceSet();
    private final ScheduledExecutorService timer;
    private final LongSupplier nanos;
    private final AtomicReference<Authenticator> auth = new AtomicReference<>();
    private volatile List<MultipathPolicy> policies = List.of();
    private final Map<String, ClientSession> sessions = new ConcurrentHashMap<>();

    /** @param timer heartbeats, reconnects, timeouts of every session; owned by the caller */
    public RtrsClient(ScheduledExecutorService timer, LongSupplier nanos) {
        this.timer = timer;
        this.nanos = nanos;
    }

    public DeviceSet devices() {
        return devices;
    }

    /** The authenticator new paths use (null = none); established paths are not affected. */
    public void authenticator(Authenticator a) {
        auth.set(a);
    }

    /** The policy services present, best-ranked first. */
    public void policies(List<MultipathPolicy> ranked) {
        policies = List.copyOf(ranked);
        sessions.values().forEach(s -> s.policies(policies));
    }

    public ClientSession open(ClientConfig cfg) {
        ClientSession[] made = new ClientSession[1];
        sessions.compute(cfg.sessionName(), (n, old) -> {
            if (old != null) {
                throw new IllegalArgumentException("session " + n + " already exists");
            }
            made[0] = new ClientSession(cfg, devices, auth::get, timer, nanos);
            made[0].policies(policies);
            return made[0];
        });
        return made[0];
    }

    public void close(ClientSession s) {
        sessions.remove(s.name(), s);
        s.close();
    }

    private ClientSession get(String name) {
        ClientSession s = sessions.get(name);
        if (s == null) {
            throw new IllegalArgumentException("no session " + name);
        }
        return s;
    }

    @Override
    public List<RtrsClientSessionInfo> sessions() {
        List<RtrsClientSessionInfo> out = new ArrayList<>();
        sessions.values().forEach(s -> out.add(s.info()));
        return out;
    }

    @Override
    public Optional<RtrsClientSessionInfo> session(String name) {
        return Optional.ofNullable(sessions.get(name)).map(ClientSession::info);
    }

    @Override
    public void addPath(String session, String path) {
        ClientSession s = get(session);
        s.addPath(PathAddress.parse(path, s.cfg.paths().get(0).port()));
    }

    @Override
    public void removePath(String session, String path) {
        get(session).removePath(path);
    }

    @Override
    public void reconnectPath(String session, String path) {
        get(session).reconnectPath(path);
    }

    @Override
    public void disconnectPath(String session, String path) {
        get(session).disconnectPath(path);
    }

    @Override
    public void setMpPolicy(String session, String policy) {
        if (!List.of(MultipathPolicy.ROUND_ROBIN, MultipathPolicy.MIN_INFLIGHT, MultipathPolicy.MIN_LATENCY)
                .contains(policy)) {
            throw new IllegalArgumentException("unknown multipath policy " + policy
                    + " (round-robin, min-inflight, min-latency)");
        }
        get(session).mpPolicy(policy);
    }

    @Override
    public void setMaxReconnectAttempts(String session, int attempts) {
        get(session).maxReconnectAttempts(attempts);
    }

    @Override
    public void resetStats(String session) {
        get(session).resetStats();
    }

    /** Close every session. */
    @Override
    public void close() {
        for (ClientSession s : List.copyOf(sessions.values())) {
            close(s);
        }
    }
}

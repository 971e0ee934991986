package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Provider;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.api.Ranked;
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
    private volatile List<MpPolicy.Named> policies = List.of();
    private volatile List<Provider> policyProviders = List.of();
    private volatile List<Provider> authProviders = List.of();
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

    /** The policy services present, best-ranked first, each known by its own {@code name()}. */
    public void policies(List<MultipathPolicy> ranked) {
        named(ranked.stream().map(p -> new MpPolicy.Named(p.name(), p)).toList(), List.of());
    }

    /**
     * The policy services present, best-ranked first, each known by the name its provider
     * announces ({@code rtrs.mp.policy}; its own {@code name()} where none is given).
     */
    public void policyServices(List<Ranked.Entry<MultipathPolicy>> ranked) {
        named(ranked.stream().map(e -> new MpPolicy.Named(e.provider() != null ? e.provider().name()
                : e.service().name(), e.service())).toList(),
                ranked.stream().map(Ranked.Entry::provider).filter(p -> p != null).toList());
    }

    private synchronized void named(List<MpPolicy.Named> ranked, List<Provider> providers) {
        policies = List.copyOf(ranked);
        policyProviders = List.copyOf(providers);
        sessions.values().forEach(s -> s.namedPolicies(policies));
    }

    /** The authenticator services present, best-ranked first (for the console). */
    public void authenticators(List<Provider> ranked) {
        authProviders = List.copyOf(ranked);
    }

    /** Each with the sessions whose active policy it is (the first provider of a name: the one in use). */
    @Override
    public List<Provider> mpPolicies() {
        return used(policyProviders, name -> sessions.values().stream().filter(s -> s.activePolicy().equals(name))
                .map(ClientSession::name).sorted().toList());
    }

    /** Each with {@code client} if new paths of this client authenticate with it. */
    @Override
    public List<Provider> authenticators() {
        String method = authMethod();
        return used(authProviders, name -> name.equals(method) ? List.of("client") : List.of());
    }

    private static List<Provider> used(List<Provider> providers, java.util.function.Function<String, List<String>> users) {
        java.util.Set<String> seen = new java.util.HashSet<>();
        return providers.stream().map(p -> seen.add(p.name()) ? p.usedBy(users.apply(p.name())) : p).toList();
    }

    @Override
    public String authMethod() {
        Authenticator a = auth.get();
        return a == null ? "" : a.method();
    }

    public ClientSession open(ClientConfig cfg) {
        ClientSession[] made = new ClientSession[1];
        sessions.compute(cfg.sessionName(), (n, old) -> {
            if (old != null) {
                throw new IllegalArgumentException("session " + n + " already exists");
            }
            made[0] = new ClientSession(cfg, devices, auth::get, timer, nanos);
            made[0].namedPolicies(policies);
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

    /**
     * By the name a policy service present announces, or one of the appliance's own three
     * (which may be stopped: the session then falls back until it is back).
     */
    @Override
    public void setMpPolicy(String session, String policy) {
        ClientSession s = get(session);
        List<String> known = knownPolicies();
        if (!known.contains(policy)) {
            throw new IllegalArgumentException("unknown multipath policy '" + policy + "' (" + String.join(", ", known)
                    + ")");
        }
        s.mpPolicy(policy);
    }

    /** What setMpPolicy takes: the names present, best-ranked first, then the appliance's own not present. */
    private List<String> knownPolicies() {
        List<String> known = new ArrayList<>();
        policies.forEach(p -> known.add(p.name()));
        for (String own : List.of(MultipathPolicy.ROUND_ROBIN, MultipathPolicy.MIN_INFLIGHT, MultipathPolicy.MIN_LATENCY)) {
            if (!known.contains(own)) {
                known.add(own);
            }
        }
        return known;
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

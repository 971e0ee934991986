package io.rnbd.rtrs.client.internal;

import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.api.PathView;
import io.rnbd.rtrs.mp.roundrobin.internal.RoundRobinPolicy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A session's multipath policy: the configured policy service if present, else the
 * best-ranked one, else the built-in round-robin floor (the policy bundle's own class, packed
 * into this bundle: see the README); and the choice of a path for each request. A service is
 * known by the name it announces ({@code rtrs.mp.policy}), which is what {@code mp.policy} and
 * the console give.
 */
final class MpPolicy {
    /** Stateless: the request counter it rotates over is each session's. */
    private static final MultipathPolicy FLOOR = new RoundRobinPolicy();

    /** A policy service and the name it announces. */
    record Named(String name, MultipathPolicy policy) {
    }

    private final AtomicReference<MultipathPolicy> policy = new AtomicReference<>(FLOOR);
    private volatile String active = FLOOR.name();
    private volatile List<Named> ranked = List.of();
    private volatile String configured;
    /** The request counter the policies rotate over. Guarded by the session lock. */
    private long sequence;

    MpPolicy(String configured) {
        this.configured = configured;
    }

    /** The policy services present, best-ranked first, each known by its own {@code name()}. */
    void policies(List<MultipathPolicy> ranked) {
        named(ranked.stream().map(p -> new Named(p.name(), p)).toList());
    }

    /** The policy services present, best-ranked first, by the names they announce. */
    void named(List<Named> ranked) {
        this.ranked = List.copyOf(ranked);
        choose();
    }

    /** The policy the session asks for by name ({@code mp.policy}). */
    void configure(String name) {
        configured = name;
        choose();
    }

    String configured() {
        return configured;
    }

    String active() {
        return active;
    }

    private synchronized void choose() {
        Named pick = null;
        for (Named p : ranked) {
            if (p.name().equals(configured)) {
                pick = p;
                break;
            }
        }
        if (pick == null && !ranked.isEmpty()) {
            pick = ranked.get(0);
        }
        policy.set(pick == null ? FLOOR : pick.policy());
        active = pick == null ? FLOOR.name() : pick.name();
    }

    /**
     * Under the lock: the path for {@code r} among the usable ones, those it has not tried
     * first; null when none is usable.
     */
    ClientPath choose(List<ClientPath> paths, ClientRequest r) {
        List<ClientPath> fresh = new ArrayList<>();
        List<ClientPath> any = new ArrayList<>();
        for (ClientPath p : paths) {
            if (p.usable()) {
                any.add(p);
                if (!r.tried.contains(p)) {
                    fresh.add(p);
                }
            }
        }
        List<ClientPath> c = fresh.isEmpty() ? any : fresh;
        if (c.isEmpty()) {
            return null;
        }
        PathView v = policy.get().select(c, sequence++);
        return v instanceof ClientPath cp && c.contains(cp) ? cp : c.get(0);
    }
}

package io.rnbd.rtrs.api;

import io.rnbd.common.Provider;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Services of one kind with their ranking, best first (higher service.ranking, then lower
 * service.id), as a dynamic greedy multiple reference sees them come and go: how the RTRS
 * client and server choose among the hot-swappable SPIs (multipath policies,
 * authenticators, the server's upper layer). Plain Java: it reads the two standard service
 * properties from the map SCR hands to bind methods, and needs no OSGi import. With the
 * {@link Provider} a service was registered as, it also knows the name the service announces
 * and its bundle, for the console.
 */
public final class Ranked<T> {
    /**
     * A service and the provider it was registered as (null when not given).
     *
     * @since 1.6
     */
    public record Entry<T>(T service, Provider provider, int ranking, long id) {
    }

    private final List<Entry<T>> entries = new ArrayList<>();

    public synchronized void put(T service, Map<String, ?> props) {
        put(service, props, null);
    }

    /** @since 1.6 */
    public synchronized void put(T service, Map<String, ?> props, Provider provider) {
        remove(service);
        Object r = props.get("service.ranking");
        Object id = props.get("service.id");
        entries.add(new Entry<>(service, provider, r instanceof Integer i ? i : 0,
                id instanceof Long l ? l : Long.MAX_VALUE));
        entries.sort(Comparator.comparingInt((Entry<T> e) -> -e.ranking).thenComparingLong(e -> e.id));
    }

    public synchronized void remove(T service) {
        entries.removeIf(e -> e.service == service);
    }

    public synchronized List<T> all() {
        List<T> out = new ArrayList<>();
        entries.forEach(e -> out.add(e.service));
        return out;
    }

    /** Every service with its provider, best first. @since 1.6 */
    public synchronized List<Entry<T>> entries() {
        return List.copyOf(entries);
    }

    /** The providers of the services, best first (those registered without one left out). @since 1.6 */
    public synchronized List<Provider> providers() {
        return entries.stream().map(Entry::provider).filter(p -> p != null).toList();
    }

    public synchronized T best() {
        return entries.isEmpty() ? null : entries.get(0).service;
    }
}

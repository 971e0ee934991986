package io.rnbd.rtrs.api;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Services of one kind with their ranking, best first (higher service.ranking, then lower
 * service.id), as a dynamic greedy multiple reference sees them come and go: how the RTRS
 * client and server choose among the hot-swappable SPIs (multipath policies,
 * authenticators, the server's upper layer). Plain Java: it reads the two standard service
 * properties from the map SCR hands to bind methods, and needs no OSGi import.
 */
public final class Ranked<T> {
    private record Entry<T>(T service, int ranking, long id) {
    }

    private final List<Entry<T>> entries = new ArrayList<>();

    public synchronized void put(T service, Map<String, ?> props) {
        remove(service);
        Object r = props.get("service.ranking");
        Object id = props.get("service.id");
        entries.add(new Entry<>(service, r instanceof Integer i ? i : 0, id instanceof Long l ? l : Long.MAX_VALUE));
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

    public synchronized T best() {
        return entries.isEmpty() ? null : entries.get(0).service;
    }
}

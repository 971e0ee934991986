package io.rnbd.common;

import java.util.List;
import java.util.Map;

/**
 * One registered provider of a hot-swappable service (a multipath policy, an authenticator, a
 * block backend) as the console, JMX and the dashboard list it: the name its service announces
 * ({@code rtrs.mp.policy}, {@code rtrs.auth}, {@code rnbd.backend}), which is the name every
 * setting and command takes, and the bundle that registered it. A bundle a user dropped into
 * {@code deploy/} is listed like the appliance's own.
 *
 * @param name     the name the service announces in its discriminating property
 * @param bundle   the registering bundle's symbolic name
 * @param version  its version
 * @param bundleId its id (what {@code bundle:update} and {@code bundle:stop} take)
 * @param ranking  its {@code service.ranking} (0 when not set): the best-ranked of a kind is the fallback
 * @param usedBy   what uses it now: the sessions whose active policy it is, the ends that
 *                 authenticate new paths with it ({@code client}, {@code server}), the exports it serves
 * @since 1.2
 */
public record Provider(String name, String bundle, String version, long bundleId, int ranking, List<String> usedBy) {
    public Provider {
        name = name == null ? "" : name;
        usedBy = List.copyOf(usedBy);
    }

    public Provider(String name, String bundle, String version, long bundleId, int ranking) {
        this(name, bundle, version, bundleId, ranking, List.of());
    }

    /** The same provider, used by {@code users} now. */
    public Provider usedBy(List<String> users) {
        return new Provider(name, bundle, version, bundleId, ranking, users);
    }

    /**
     * A provider from the service properties a registry reports (a DS bind method's map):
     * {@code nameKey}'s value and {@code service.ranking}; the bundle as given.
     */
    public static Provider of(String nameKey, Map<String, ?> props, String bundle, String version, long bundleId) {
        Object name = props.get(nameKey);
        Object ranking = props.get("service.ranking");
        return new Provider(name == null ? "" : name.toString(), bundle, version, bundleId,
                ranking instanceof Integer r ? r : 0);
    }
}

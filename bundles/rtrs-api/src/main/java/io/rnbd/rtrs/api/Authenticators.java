package io.rnbd.rtrs.api;

import io.rnbd.common.Errno;
import io.rnbd.common.Provider;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * How both ends choose the authenticator for a new path, so that the choice never depends
 * on which bundle happened to start first.
 */
public final class Authenticators {
    /**
     * The configuration key of both ends' method ({@code io.rnbd.rtrs.client},
     * {@code io.rnbd.rtrs.server}): an authenticator's {@code rtrs.auth}; absent or empty = the
     * best-ranked one present.
     *
     * @since 1.10
     */
    public static final String CONFIG_KEY = "auth.method";

    /**
     * What an operator names to go back to the best-ranked authenticator present
     * ({@link #CONFIG_KEY} removed).
     *
     * @since 1.10
     */
    public static final String DEFAULT = "default";

    private Authenticators() {
    }

    /**
     * The check both ends' {@code setAuthMethod} make: the {@link #CONFIG_KEY} value an
     * operator's choice becomes.
     *
     * @param method     the name a registered authenticator announces, or {@link #DEFAULT}
     * @param registered the names of the authenticators registered now
     * @return {@code method}, or empty for {@link #DEFAULT}
     * @throws RtrsAdminException EINVAL for any other name, naming those registered
     * @since 1.10
     */
    public static String configured(String method, Collection<String> registered) throws RtrsAdminException {
        if (DEFAULT.equals(method)) {
            return "";
        }
        if (method == null || !registered.contains(method)) {
            Set<String> names = new LinkedHashSet<>(registered);
            throw new RtrsAdminException(Errno.EINVAL, "unknown authenticator '" + method + "' ("
                    + (names.isEmpty() ? "none registered" : "registered: " + String.join(", ", names))
                    + "; or " + DEFAULT + ")");
        }
        return method;
    }

    /**
     * @param ranked the authenticator services present, best-ranked first
     * @param method the configured {@code auth.method}; empty = the best-ranked one present
     * @return the authenticator to use; null only when {@code method} is empty and none is
     *         present (authentication off). A configured method whose service is absent gives
     *         a stand-in that refuses with EAGAIN, which is retried: the path waits for the
     *         bundle instead of silently running without authentication.
     */
    public static Authenticator select(List<Authenticator> ranked, String method) {
        if (method == null || method.isBlank()) {
            return ranked.isEmpty() ? null : ranked.get(0);
        }
        String m = method.trim();
        for (Authenticator a : ranked) {
            if (a.method().equals(m)) {
                return a;
            }
        }
        return new Unavailable(m);
    }

    /**
     * The client's list of authenticators ({@link RtrsClientAdmin#authenticators}) with the
     * first provider of {@code serverMethod} (the server's {@link RtrsServerAdmin#authMethod})
     * also used by {@code server}: what {@code rtrs:authenticators} and the telemetry table show.
     *
     * @since 1.6
     */
    public static List<Provider> withServer(List<Provider> providers, String serverMethod) {
        Set<String> seen = new HashSet<>();
        return providers.stream().map(p -> {
            if (!seen.add(p.name()) || !p.name().equals(serverMethod)) {
                return p;
            }
            List<String> users = new ArrayList<>(p.usedBy());
            users.add("server");
            return p.usedBy(users);
        }).toList();
    }

    /** Stands in for a configured method whose bundle is not (yet) running. */
    private record Unavailable(String method) implements Authenticator {
        @Override
        public AuthExchange initiate(String hostId) throws AuthException {
            throw refused();
        }

        @Override
        public AuthExchange respond() {
            return new AuthExchange() {
                @Override
                public byte[] step(byte[] peerMessage) throws AuthException {
                    throw refused();
                }

                @Override
                public boolean done() {
                    return false;
                }

                @Override
                public String peerId() {
                    return "";
                }
            };
        }

        private AuthException refused() {
            return new AuthException(Errno.EAGAIN, "authentication method " + method + " is not available yet");
        }
    }
}

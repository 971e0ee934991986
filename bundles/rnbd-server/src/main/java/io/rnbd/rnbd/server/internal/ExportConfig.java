package io.rnbd.rnbd.server.internal;

import io.rnbd.rtrs.api.RtrsServerSession;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * One export, as configured by a factory configuration of {@code io.rnbd.server.export}.
 *
 * <p>Access ({@link #admits}): {@code allowedHosts} is the security control, matched
 * against the host id the session's authenticator <em>proved</em> (CHAP); a claimed id
 * (authenticator {@code none}) counts only with {@code trustClaimedIdentity}, and a session
 * that did not authenticate at all (a Linux client) has no id to match. {@code allowedSessions}
 * is a convenience filter on the session name, which the client chooses and nobody checks:
 * it keeps honest clients apart, never a hostile one out.
 *
 * @param allowedSessions      session names allowed to open it (a convenience, not security); empty = any
 * @param offlineWaitMs        how long IO waits for a missing backend ({@link #DEFAULT_OFFLINE_WAIT_MS}); 0 = fail at once
 * @param backendParams        every {@code backend.X} key, passed to the backend as {@code X}
 * @param path                 where an OPEN finds it once its device name is resolved against the
 *                             server's search path ({@link DevSearchPath}); empty = {@code /<name>}
 * @param allowedHosts         host ids allowed to open it, {@code *} for any authenticated host;
 *                             empty = any client, authenticated or not
 * @param trustClaimedIdentity match {@code allowedHosts} against a host id that was only claimed
 *                             (authenticator {@code none}) too; default false
 * @param ha                   several servers export the same storage, one of them active at a time
 *                             ({@link io.rnbd.rnbd.api.BlockBackend#openShared}; docs/scale-out.md)
 */
public record ExportConfig(String name, String backend, boolean readOnly, Set<String> allowedSessions,
                           long offlineWaitMs, Map<String, String> backendParams, String path,
                           Set<String> allowedHosts, boolean trustClaimedIdentity, boolean ha) {
    public static final String BACKEND_PREFIX = "backend.";
    /**
     * How long IO waits for a missing backend by default: 20 s. A backend bundle's stop/start or
     * update takes well under a second (docs/reliability.md), so its IO waits and completes; the
     * bound stays under the client's 30 s request timeout, so that the server, not the client's
     * timer, says what went wrong (ENODEV, logged) when a backend does not come back.
     */
    public static final long DEFAULT_OFFLINE_WAIT_MS = 20_000;
    /** In {@code allowed.hosts}: any host whose id was proven (or claimed, if claims are trusted). */
    public static final String ANY_HOST = "*";

    public ExportConfig(String name, String backend, boolean readOnly, Set<String> allowedSessions,
                        long offlineWaitMs, Map<String, String> backendParams) {
        this(name, backend, readOnly, allowedSessions, offlineWaitMs, backendParams, "");
    }

    public ExportConfig(String name, String backend, boolean readOnly, Set<String> allowedSessions,
                        long offlineWaitMs, Map<String, String> backendParams, String path) {
        this(name, backend, readOnly, allowedSessions, offlineWaitMs, backendParams, path, Set.of(), false, false);
    }

    /** The same export with access by host id. */
    public ExportConfig withAllowedHosts(Set<String> hosts, boolean trustClaims) {
        return new ExportConfig(name, backend, readOnly, allowedSessions, offlineWaitMs, backendParams, path, hosts,
                trustClaims, ha);
    }

    /** The same export, served by several servers or not. */
    public ExportConfig withHa(boolean several) {
        return new ExportConfig(name, backend, readOnly, allowedSessions, offlineWaitMs, backendParams, path,
                allowedHosts, trustClaimedIdentity, several);
    }

    /** The path an OPEN must resolve to: the configured one, or {@code /<name>}. */
    public String publishedPath() {
        return path.isEmpty() ? DevSearchPath.squeeze("/" + name) : path;
    }

    public ExportConfig {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("export name missing");
        }
        if (name.getBytes(StandardCharsets.UTF_8).length > 254 || name.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("export name '" + name + "' is longer than 254 bytes or has a NUL");
        }
        if (backend == null || backend.isBlank()) {
            throw new IllegalArgumentException("export " + name + ": backend missing");
        }
        if (offlineWaitMs < 0) {
            throw new IllegalArgumentException("export " + name + ": offline.wait.ms must be >= 0");
        }
        if (ha && readOnly) {
            throw new IllegalArgumentException("export " + name + ": ha serves writes through one server at a time; "
                    + "a read-only export needs no ha (every server may serve it)");
        }
        allowedSessions = Set.copyOf(allowedSessions);
        allowedHosts = Set.copyOf(allowedHosts);
        backendParams = Map.copyOf(backendParams);
        path = path == null ? "" : path.trim();
        if (!path.isEmpty() && (!path.startsWith("/") || path.contains("..") || path.contains("%"))) {
            throw new IllegalArgumentException("export " + name + ": path '" + path
                    + "' must be absolute, without .. and %");
        }
        if (!path.isEmpty()) {
            path = DevSearchPath.squeeze(path);
        }
    }

    /** From configuration properties (values may be Strings, as Karaf's .cfg files give them). */
    public static ExportConfig fromProperties(Map<String, ?> props) {
        String name = str(props.get("name"), "");
        Map<String, String> params = new TreeMap<>();
        props.forEach((k, v) -> {
            if (k.startsWith(BACKEND_PREFIX) && k.length() > BACKEND_PREFIX.length() && v != null) {
                params.put(k.substring(BACKEND_PREFIX.length()), str(v, ""));
            }
        });
        long wait;
        try {
            wait = Long.parseLong(str(props.get("offline.wait.ms"), Long.toString(DEFAULT_OFFLINE_WAIT_MS)).trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("export " + name + ": offline.wait.ms is not a number");
        }
        return new ExportConfig(name.trim(), str(props.get("backend"), "").trim(),
                Boolean.parseBoolean(str(props.get("read.only"), "false").trim()), list(props.get("allowed.sessions")),
                wait, params, str(props.get("path"), ""), list(props.get("allowed.hosts")),
                Boolean.parseBoolean(str(props.get("trust.claimed.identity"), "false").trim()),
                Boolean.parseBoolean(str(props.get("ha"), "false").trim()));
    }

    private static Set<String> list(Object v) {
        return Arrays.stream(str(v, "").split(",")).map(String::trim).filter(s -> !s.isEmpty())
                .collect(Collectors.toSet());
    }

    private static String str(Object v, String dflt) {
        if (v == null) {
            return dflt;
        }
        if (v instanceof String[] a) {
            return String.join(",", a);
        }
        return v.toString();
    }

    /** Whether {@code session} may open this export. */
    public boolean allows(RtrsServerSession session) {
        return refusal(session) == null;
    }

    /**
     * Why {@code session} may not open this export, in one line for the log, or null if it may:
     * its host id must be in {@code allowed.hosts} (and proven, unless claims are trusted), and
     * its name in {@code allowed.sessions}, each where the list is set.
     */
    public String refusal(RtrsServerSession session) {
        if (!allowedHosts.isEmpty()) {
            String host = session.hostId() == null ? "" : session.hostId();
            String method = session.authMethod() == null || session.authMethod().isEmpty() ? "no authentication"
                    : session.authMethod();
            if (host.isEmpty()) {
                return "it requires an authenticated host (allowed.hosts) and the session did not authenticate ("
                        + method + "; a Linux client never does)";
            }
            if (!session.hostIdProven() && !trustClaimedIdentity) {
                return "its host id '" + host + "' was claimed (" + method + "), not proven, and the export "
                        + "requires a proven one (allowed.hosts, trust.claimed.identity=false)";
            }
            if (!allowedHosts.contains(ANY_HOST) && !allowedHosts.contains(host)) {
                return "host '" + host + "' is not in allowed.hosts";
            }
        }
        if (!allowedSessions.isEmpty() && !allowedSessions.contains(session.name())) {
            return "session name '" + session.name() + "' is not in allowed.sessions";
        }
        return null;
    }
}

package io.rnbd.rnbd.server;

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
 * @param allowedSessions session names or authenticated host ids allowed to open it; empty = all
 * @param offlineWaitMs   how long IO waits for a missing backend; 0 = fail at once
 * @param backendParams   every {@code backend.X} key, passed to the backend as {@code X}
 * @param path            where an OPEN finds it once its device name is resolved against the
 *                        server's search path ({@link DevSearchPath}); empty = {@code /<name>}
 */
public record ExportConfig(String name, String backend, boolean readOnly, Set<String> allowedSessions,
                           long offlineWaitMs, Map<String, String> backendParams, String path) {
    public static final String BACKEND_PREFIX = "backend.";

    public ExportConfig(String name, String backend, boolean readOnly, Set<String> allowedSessions,
                        long offlineWaitMs, Map<String, String> backendParams) {
        this(name, backend, readOnly, allowedSessions, offlineWaitMs, backendParams, "");
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
        allowedSessions = Set.copyOf(allowedSessions);
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
            wait = Long.parseLong(str(props.get("offline.wait.ms"), "0").trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("export " + name + ": offline.wait.ms is not a number");
        }
        Set<String> allowed = Arrays.stream(str(props.get("allowed.sessions"), "").split(","))
                .map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toSet());
        return new ExportConfig(name.trim(), str(props.get("backend"), "").trim(),
                Boolean.parseBoolean(str(props.get("read.only"), "false").trim()), allowed, wait, params,
                str(props.get("path"), ""));
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

    /** Whether {@code session} may open this export, by name or by authenticated host id. */
    public boolean allows(RtrsServerSession session) {
        if (allowedSessions.isEmpty()) {
            return true;
        }
        String host = session.hostId();
        return allowedSessions.contains(session.name())
                || (host != null && !host.isEmpty() && allowedSessions.contains(host));
    }
}

package io.rnbd.rnbd.server.internal.osgi;

import io.rnbd.common.Bytes;
import io.rnbd.common.Errno;
import io.rnbd.common.Provider;
import io.rnbd.common.Settle;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.Names;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rnbd.api.Sizes;
import java.io.IOException;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * The {@link RnbdServerAdmin} service: the running server's view and run-time operations,
 * and the operator's export-add/remove over ConfigAdmin (as {@code SoftLinkAdminComponent}
 * does for soft links). An export is a factory configuration of {@link ExportComponent#PID},
 * created with location "?" and found by its {@code name}, so those from etc/*.cfg count as
 * well. ConfigAdmin hands it to the server on its own thread, so both wait until the server
 * has it (or no longer has it); an export the server never takes is not left configured, to
 * fail again at every restart.
 */
final class ServerAdmin implements RnbdServerAdmin {
    /** How long {@link #addExport} waits for a new export to come online, for the report. */
    static final long ONLINE_MS = 3000;
    /** How long the server may take to pick a configuration up or drop it before it is said not to. */
    static final long SETTLE_MS = 10_000;
    private static final long POLL_MS = 20;
    private static final String ANY_LOCATION = "?";

    private final RnbdServerAdmin server;
    private final ConfigurationAdmin configAdmin;
    private final Settle settle;

    ServerAdmin(RnbdServerAdmin server, ConfigurationAdmin configAdmin) {
        this(server, configAdmin, System::nanoTime, Thread::sleep);
    }

    ServerAdmin(RnbdServerAdmin server, ConfigurationAdmin configAdmin, LongSupplier nanoClock,
                Settle.Sleeper sleeper) {
        this.server = server;
        this.configAdmin = configAdmin;
        this.settle = new Settle(nanoClock, sleeper, POLL_MS);
    }

    @Override
    public synchronized ExportResult addExport(ExportRequest r) throws IOException {
        Hashtable<String, Object> p = properties(r);
        String name = r.name();
        List<String> known = server.backends().stream().map(Provider::name).distinct().sorted().toList();
        // a server that lists none (an older one) is left to say so itself
        if (!known.isEmpty() && !known.contains(r.backend())) {
            throw new BlockIoException(Errno.EINVAL, "unknown backend '" + r.backend() + "' (registered: "
                    + String.join(", ", known) + "; rnbd:backends lists them)");
        }
        // the running backend refuses what could never open (memory over 64t, say): better
        // now, in one line, than an export saved that stays offline for ever
        try {
            server.validateExport(r.backend(), backendParams(p), r.readOnly());
        } catch (IOException e) {
            throw new BlockIoException(Errno.EINVAL, "export " + name + " could never open: " + e.getMessage());
        }
        if (!configs(name).isEmpty()) {
            throw new BlockIoException(Errno.EEXIST, "export '" + name + "' already exists");
        }
        Configuration c = configAdmin.createFactoryConfiguration(ExportComponent.PID, ANY_LOCATION);
        c.update(p);
        // A new export starts offline ("backend not available") until the server has opened it,
        // so only ONLINE settles early; one offline for a reason is reported with it.
        Optional<ExportInfo> e = settle(name, o -> o.isPresent() && o.get().state() == ExportState.ONLINE, ONLINE_MS);
        if (e.isEmpty()) {
            e = settle(name, Optional::isPresent, SETTLE_MS - ONLINE_MS);
        }
        if (e.isEmpty()) {
            c.delete();
            throw new BlockIoException(Errno.ETIMEDOUT, "export " + name + ": the RNBD server did not take it within "
                    + SETTLE_MS + " ms (see the log); nothing was configured");
        }
        return new ExportResult(e.get(), "export " + name + " added: " + describe(e.get()));
    }

    @Override
    public synchronized ExportResult removeExport(String name, boolean force) throws IOException {
        Names.requireExport("export name", name);
        List<Configuration> configs = configs(name);
        if (configs.isEmpty()) {
            throw new BlockIoException(Errno.ENOENT, "no export '" + name + "' is configured");
        }
        Optional<ExportInfo> e = find(name);
        if (!force && e.isPresent() && !e.get().openers().isEmpty()) {
            throw new BlockIoException(Errno.EBUSY, "export '" + name + "' is open by " + e.get().openers().stream()
                    .map(Opener::session).collect(Collectors.joining(", ")) + "; use --force");
        }
        for (Configuration c : configs) {
            c.delete();
        }
        if (settle(name, Optional::isEmpty, SETTLE_MS).isPresent()) {
            throw new BlockIoException(Errno.ETIMEDOUT, "export " + name + " is no longer configured but the server "
                    + "still had it after " + SETTLE_MS + " ms (see the log)");
        }
        return new ExportResult(null, "export " + name + " removed");
    }

    /** The export (or its absence) once {@code settled} accepts it, else as it is at the deadline. */
    private Optional<ExportInfo> settle(String name, Predicate<Optional<ExportInfo>> settled, long ms)
            throws BlockIoException {
        try {
            return settle.until(() -> find(name), settled, ms);
        } catch (InterruptedException x) {
            throw new BlockIoException(Errno.EINTR, "interrupted waiting for export " + name);
        }
    }

    /** The configuration of an export, checked: what could never be an export is refused before it is kept. */
    private static Hashtable<String, Object> properties(ExportRequest r) throws BlockIoException {
        Names.requireExport("export name", r.name());
        String backend = r.backend();
        if (backend == null || backend.isBlank()) {
            throw new BlockIoException(Errno.EINVAL, "a backend is required (rnbd:backends lists them: memory, file ...)");
        }
        Hashtable<String, Object> p = new Hashtable<>();
        p.put("name", r.name());
        p.put("backend", backend);
        for (Map.Entry<String, String> param : new TreeMap<>(r.params()).entrySet()) {
            if (!param.getKey().matches("[A-Za-z0-9._-]+") || param.getValue() == null || param.getValue().isBlank()) {
                throw new BlockIoException(Errno.EINVAL, "a parameter is KEY=VALUE (a key of letters, digits and "
                        + ". _ -), not '" + param.getKey() + "=" + param.getValue() + "'");
            }
            p.put("backend." + param.getKey(), param.getValue().trim());
        }
        Object path = p.get("backend.path");
        boolean create = "true".equals(p.get("backend.create"));
        switch (backend) {
            case "memory" -> {
                if (!p.containsKey("backend.size")) {
                    throw new BlockIoException(Errno.EINVAL, "the memory backend needs size=");
                }
                if (path != null || create) {
                    throw new BlockIoException(Errno.EINVAL, "path= and create=true are for the file backend");
                }
            }
            case "file" -> {
                if (path == null || !path.toString().startsWith("/")) {
                    throw new BlockIoException(Errno.EINVAL, "the file backend needs path= with an absolute path");
                }
                if (create && !p.containsKey("backend.size")) {
                    throw new BlockIoException(Errno.EINVAL, "create=true needs size=");
                }
            }
            // another backend checks its own parameters (validate); these are the file backend's
            default -> {
                if (create) {
                    throw new BlockIoException(Errno.EINVAL, "create=true is for the file backend (give " + backend
                            + "'s own parameters)");
                }
            }
        }
        if (p.get("backend.size") instanceof String size) {
            // checked whichever backend, running or not: 513 or 2^63-1 can never open
            try {
                p.put("backend.size", Long.toString(Sizes.requireDeviceSize("size " + size,
                        Sizes.parse("size " + size, size))));
            } catch (IllegalArgumentException e) {
                throw new BlockIoException(Errno.EINVAL, e.getMessage());
            }
        }
        p.put("read.only", r.readOnly());
        if (!r.allowedSessions().isEmpty()) {
            StringBuilder list = new StringBuilder();
            for (String s : r.allowedSessions()) {
                list.append(list.length() == 0 ? "" : ",").append(Names.require("allowed session", s.trim()));
            }
            p.put("allowed.sessions", list.toString());
        }
        if (r.offlineWaitMs() != null) {
            if (r.offlineWaitMs() < 0) {
                throw new BlockIoException(Errno.EINVAL, "offline wait must be a number of milliseconds >= 0, not "
                        + r.offlineWaitMs());
            }
            p.put("offline.wait.ms", r.offlineWaitMs());
        }
        return p;
    }

    /** The backend.X keys as the server passes them to the backend: X. */
    private static Map<String, String> backendParams(Hashtable<String, Object> props) {
        Map<String, String> params = new TreeMap<>();
        props.forEach((key, value) -> {
            if (key.startsWith("backend.")) {
                params.put(key.substring("backend.".length()), String.valueOf(value));
            }
        });
        return params;
    }

    private static String describe(ExportInfo e) {
        return e.state().name().toLowerCase(java.util.Locale.ROOT) + ", " + e.backend() + ", " + Bytes.format(e.size())
                + (e.readOnly() ? ", read-only" : "") + (e.lastError().isEmpty() ? "" : " (" + e.lastError() + ")");
    }

    private Optional<ExportInfo> find(String name) {
        return server.exports().stream().filter(e -> e.name().equals(name)).findFirst();
    }

    /** The configurations of export {@code name} (a checked name: no filter metacharacters). */
    private List<Configuration> configs(String name) throws BlockIoException {
        try {
            Configuration[] found = configAdmin.listConfigurations("(&(service.factoryPid=" + ExportComponent.PID
                    + ")(name=" + name + "))");
            return found == null ? List.of() : List.of(found);
        } catch (IOException | InvalidSyntaxException e) {
            throw new BlockIoException(Errno.EIO, "cannot read configurations", e);
        }
    }

    // the running server, as it is

    @Override
    public List<ExportInfo> exports() {
        return server.exports();
    }

    @Override
    public List<Provider> backends() {
        return server.backends();
    }

    @Override
    public void forceClose(String export, String session) throws IOException {
        server.forceClose(export, session);
    }

    @Override
    public void resetStats(String export) throws IOException {
        server.resetStats(export);
    }

    @Override
    public void validateExport(String backend, Map<String, String> params, boolean readOnly) throws IOException {
        server.validateExport(backend, params, readOnly);
    }

    @Override
    public long resizeExport(String export, long bytes) throws IOException {
        Names.requireExport("export", export);
        return server.resizeExport(export, bytes);
    }
}

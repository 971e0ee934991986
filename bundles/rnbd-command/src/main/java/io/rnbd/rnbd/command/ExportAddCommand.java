package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Formats;
import io.rnbd.command.support.Providers;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportState;
import io.rnbd.rnbd.api.Sizes;
import io.rnbd.rnbd.command.completers.BackendNameCompleter;
import java.io.IOException;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.Collections;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * {@code rnbd:export-add --backend BACKEND ... NAME}: a new factory configuration of
 * {@code io.rnbd.server.export}, so the export survives restarts. The backend is any registered
 * one by the name it announces ({@code rnbd:backends}: memory, file, rbd, a bundle dropped into
 * deploy/); its parameters are {@code --size}, {@code --path}, {@code --create} for the
 * appliance's own, and {@code --param KEY=VALUE} for any ({@code backend.KEY}).
 */
@Service
@Command(scope = "rnbd", name = "export-add", description = "Add an export to the RNBD server (kept in ConfigAdmin)")
public class ExportAddCommand extends ConsoleCommand {
    @Reference(optional = true)
    ConfigurationAdmin configAdmin;

    @Reference(optional = true)
    RnbdServerAdmin admin;

    @Argument(index = 0, name = "name", description = "Export name, as clients ask for it", required = true)
    String name;

    @Option(name = "--backend", description = "Block backend by the name it announces (rnbd:backends: memory, file, "
            + "rbd, or a bundle of your own; required)")
    @Completion(BackendNameCompleter.class)
    String backend;

    @Option(name = "--size", description = "Size (512, 64k, 1m, 1g, 1t); required for memory, for file with --create")
    String size;

    @Option(name = "--path", description = "Absolute path of the image file (file backend)")
    String path;

    @Option(name = "--create", description = "Create the image file (of --size) if it does not exist (file backend)")
    boolean create;

    @Option(name = "--param", multiValued = true, description = "A backend parameter KEY=VALUE, kept as backend.KEY "
            + "(e.g. image=vol1 for rbd); repeat for more")
    List<String> params;

    @Option(name = "--read-only", description = "Refuse RW and MIGRATION opens (EROFS)")
    boolean readOnly;

    @Option(name = "--allowed-sessions", description = "Comma list of session names or host ids allowed to open; default all")
    String allowedSessions;

    // a String, so a bad number gets our one-line error rather than the shell's conversion message
    @Option(name = "--offline-wait-ms", description = "How long IO waits for a missing backend; 0 = fail at once; "
            + "default: the server's (20000)")
    String offlineWaitMs;

    /** How long to wait for the server to pick the export up, for the report. */
    long waitMillis = 3000;

    @Override
    protected void run(PrintStream out) throws IOException {
        Dictionary<String, Object> props = properties();
        Configs.require(configAdmin);
        if (admin != null) {
            requireRegistered(admin, backend);
            // the running backend refuses what could never open (memory over 64t, say):
            // better now, in one line, than an export saved that stays offline for ever
            try {
                admin.validateExport(backend, backendParams(props), readOnly);
            } catch (IOException e) {
                throw new IllegalArgumentException("export " + name + " could never open: "
                        + ConsoleWords.flags(e.getMessage()));
            }
        }
        if (!Configs.find(configAdmin, Configs.EXPORT_PID, "name", name).isEmpty()) {
            throw new IllegalArgumentException("export '" + name + "' already exists");
        }
        Configuration c = configAdmin.createFactoryConfiguration(Configs.EXPORT_PID, Configs.ANY_LOCATION);
        c.update(props);
        if (admin == null) {
            out.println("export " + name + " configured; the RNBD server is not running (bundle rnbd-server)");
            return;
        }
        // A new export starts offline ("backend not available") until the server has opened it,
        // so only ONLINE settles early; a real failure is reported at the deadline with its reason.
        Optional<ExportInfo> e = Poll.until(() -> Exports.find(admin, name),
                i -> i.state() == ExportState.ONLINE, waitMillis);
        out.println("export " + name + " added: " + e.map(ExportAddCommand::describe)
                .orElse("not picked up by the server yet"));
    }

    /**
     * A backend the server knows by that name; else the names it knows. A server that knows
     * none at all (it lists none: an older one) is left to say so itself.
     */
    private static void requireRegistered(RnbdServerAdmin admin, String backend) {
        List<String> names = Providers.names(admin.backends());
        if (!names.isEmpty() && !names.contains(backend)) {
            throw new IllegalArgumentException("unknown backend '" + backend + "' (registered: "
                    + String.join(", ", names) + "; rnbd:backends lists them)");
        }
    }

    private static String describe(ExportInfo e) {
        return Formats.lower(e.state()) + ", " + e.backend() + ", " + Formats.bytes(e.size())
                + (e.readOnly() ? ", read-only" : "")
                + (e.lastError().isEmpty() ? "" : " (" + ConsoleWords.flags(e.lastError()) + ")");
    }

    /** The backend.X keys as the server passes them to the backend: X. */
    private static Map<String, String> backendParams(Dictionary<String, Object> props) {
        Map<String, String> params = new TreeMap<>();
        for (String key : Collections.list(props.keys())) {
            if (key.startsWith("backend.")) {
                params.put(key.substring("backend.".length()), String.valueOf(props.get(key)));
            }
        }
        return params;
    }

    private Dictionary<String, Object> properties() {
        Configs.requireExportName("export name", name);
        if (backend == null) {
            throw new IllegalArgumentException("--backend is required (rnbd:backends lists them: memory, file ...)");
        }
        Hashtable<String, Object> p = new Hashtable<>();
        p.put("name", name);
        for (String param : params == null ? List.<String>of() : params) {
            int eq = param.indexOf('=');
            String key = eq < 0 ? "" : param.substring(0, eq).trim();
            if (!key.matches("[A-Za-z0-9._-]+") || param.substring(eq + 1).isBlank()) {
                throw new IllegalArgumentException("--param takes KEY=VALUE (a key of letters, digits and . _ -), not '"
                        + param + "'");
            }
            if (p.put("backend." + key, param.substring(eq + 1).trim()) != null) {
                throw new IllegalArgumentException("--param " + key + " is given twice");
            }
        }
        switch (backend) {
            case "memory" -> {
                if (size == null) {
                    throw new IllegalArgumentException("the memory backend needs --size");
                }
                if (path != null || create) {
                    throw new IllegalArgumentException("--path and --create are for the file backend");
                }
            }
            case "file" -> {
                if (path == null || !path.startsWith("/")) {
                    throw new IllegalArgumentException("the file backend needs --path with an absolute path");
                }
                if (create && size == null) {
                    throw new IllegalArgumentException("--create needs --size");
                }
                put(p, "backend.path", path);
                if (create) {
                    put(p, "backend.create", "true");
                }
            }
            default -> {
                // another backend checks its own parameters (validate, below); these are the file backend's
                if (create) {
                    throw new IllegalArgumentException("--create is for the file backend (give --param for "
                            + backend + "'s own)");
                }
                if (path != null) {
                    put(p, "backend.path", path);
                }
            }
        }
        p.put("backend", backend);
        if (size != null) {
            // checked here whichever backend, running or not: 513 or 2^63-1 can never open
            long bytes = Sizes.requireDeviceSize("size " + size, Sizes.parse("size " + size, size));
            put(p, "backend.size", Long.toString(bytes));
        }
        p.put("read.only", readOnly);
        if (allowedSessions != null) {
            String list = Arrays.stream(allowedSessions.split(",")).map(String::trim).filter(s -> !s.isEmpty())
                    .map(s -> Configs.requireName("allowed session", s)).collect(Collectors.joining(","));
            p.put("allowed.sessions", list);
        }
        if (offlineWaitMs != null) {
            p.put("offline.wait.ms", waitMs(offlineWaitMs));
        }
        return p;
    }

    /** A backend key from an option, unless --param gave it too. */
    private static void put(Hashtable<String, Object> p, String key, String value) {
        if (p.put(key, value) != null) {
            throw new IllegalArgumentException(key.substring("backend.".length()) + " is given both as an option and as "
                    + "--param");
        }
    }

    private static long waitMs(String text) {
        try {
            long ms = Long.parseLong(text.trim());
            if (ms >= 0) {
                return ms;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("--offline-wait-ms must be a number of milliseconds >= 0, not '" + text + "'");
    }
}

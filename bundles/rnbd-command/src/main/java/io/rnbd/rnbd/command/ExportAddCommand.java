package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Formats;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportState;
import io.rnbd.rnbd.api.Sizes;
import java.io.IOException;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.Collections;
import java.util.Dictionary;
import java.util.Hashtable;
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
import org.apache.karaf.shell.support.completers.StringsCompleter;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * {@code rnbd:export-add NAME --backend memory|file ...}: a new factory configuration of
 * {@code io.rnbd.server.export}, so the export survives restarts.
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

    @Option(name = "--backend", description = "Block backend: memory or file (required)")
    @Completion(value = StringsCompleter.class, values = {"memory", "file"})
    String backend;

    @Option(name = "--size", description = "Size (512, 64k, 1m, 1g, 1t); required for memory, for file with --create")
    String size;

    @Option(name = "--path", description = "Absolute path of the image file (file backend)")
    String path;

    @Option(name = "--create", description = "Create the image file (of --size) if it does not exist (file backend)")
    boolean create;

    @Option(name = "--read-only", description = "Refuse RW and MIGRATION opens (EROFS)")
    boolean readOnly;

    @Option(name = "--allowed-sessions", description = "Comma list of session names or host ids allowed to open; default all")
    String allowedSessions;

    // a String, so a bad number gets our one-line error rather than the shell's conversion message
    @Option(name = "--offline-wait-ms", description = "How long IO waits for a missing backend; 0 = fail at once")
    String offlineWaitMs = "0";

    /** How long to wait for the server to pick the export up, for the report. */
    long waitMillis = 3000;

    @Override
    protected void run(PrintStream out) throws IOException {
        Dictionary<String, Object> props = properties();
        Configs.require(configAdmin);
        if (admin != null) {
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
            throw new IllegalArgumentException("--backend is required (memory, file)");
        }
        Hashtable<String, Object> p = new Hashtable<>();
        p.put("name", name);
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
                p.put("backend.path", path);
                if (create) {
                    p.put("backend.create", "true");
                }
            }
            default -> throw new IllegalArgumentException("unknown backend '" + backend + "' (memory, file)");
        }
        p.put("backend", backend);
        if (size != null) {
            // checked here whichever backend, running or not: 513 or 2^63-1 can never open
            long bytes = Sizes.requireDeviceSize("size " + size, Sizes.parse("size " + size, size));
            p.put("backend.size", Long.toString(bytes));
        }
        p.put("read.only", readOnly);
        if (allowedSessions != null) {
            String list = Arrays.stream(allowedSessions.split(",")).map(String::trim).filter(s -> !s.isEmpty())
                    .map(s -> Configs.requireName("allowed session", s)).collect(Collectors.joining(","));
            p.put("allowed.sessions", list);
        }
        p.put("offline.wait.ms", waitMs(offlineWaitMs));
        return p;
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

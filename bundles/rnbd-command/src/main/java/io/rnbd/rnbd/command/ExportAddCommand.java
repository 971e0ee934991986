package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportRequest;
import io.rnbd.rnbd.command.completers.BackendNameCompleter;
import java.io.IOException;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/**
 * {@code rnbd:export-add --backend BACKEND ... NAME}, a face of {@link RnbdServerAdmin#addExport}:
 * a new factory configuration of {@code io.rnbd.server.export}, so the export survives
 * restarts. The backend is any registered one by the name it announces ({@code rnbd:backends}:
 * memory, file, rbd, a bundle dropped into deploy/); its parameters are {@code --size},
 * {@code --path}, {@code --create} for the appliance's own, and {@code --param KEY=VALUE} for
 * any ({@code backend.KEY}). What the service and the backend say in configuration words
 * ({@code size=}) is printed in the console's ({@code --size}).
 */
@Service
@Command(scope = "rnbd", name = "export-add", description = "Add an export to the RNBD server (kept in ConfigAdmin)")
public class ExportAddCommand extends ConsoleCommand {
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

    @Override
    protected void run(PrintStream out) throws IOException {
        Map<String, String> p = new TreeMap<>(ExportRequest.params(params));
        put(p, "size", size);
        put(p, "path", path);
        put(p, "create", create ? "true" : null);
        List<String> allowed = allowedSessions == null ? List.of() : Arrays.stream(allowedSessions.split(","))
                .map(String::trim).filter(s -> !s.isEmpty()).toList();
        ExportRequest request = new ExportRequest(name, backend, p, readOnly, allowed,
                offlineWaitMs == null ? null : waitMs(offlineWaitMs));
        try {
            out.println(ConsoleWords.flags(Exports.require(admin).addExport(request).message()));
        } catch (BlockIoException e) {
            throw new IOException(ConsoleWords.flags(e.getMessage()), e);
        }
    }

    /** A backend parameter from an option, unless --param gave it too. */
    private static void put(Map<String, String> p, String key, String value) {
        if (value != null && p.put(key, value) != null) {
            throw new IllegalArgumentException(key + " is given both as an option and as --param");
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

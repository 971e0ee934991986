package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rnbd.command.completers.ExportNameCompleter;
import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/** {@code rnbd:export-remove NAME}: delete the export's configuration; refused while clients have it open. */
@Service
@Command(scope = "rnbd", name = "export-remove", description = "Remove an export from the RNBD server (and its configuration)")
public class ExportRemoveCommand extends ConsoleCommand {
    @Reference(optional = true)
    ConfigurationAdmin configAdmin;

    @Reference(optional = true)
    RnbdServerAdmin admin;

    @Argument(index = 0, name = "name", description = "Export name", required = true)
    @Completion(ExportNameCompleter.class)
    String name;

    @Option(name = "--force", description = "Remove even while clients have the export open (their IO fails)")
    boolean force;

    @Override
    protected void run(PrintStream out) throws IOException {
        List<Configuration> configs = Configs.find(Configs.require(configAdmin), Configs.EXPORT_PID, "name", name);
        if (configs.isEmpty()) {
            throw new IllegalArgumentException("no export '" + name + "' is configured");
        }
        Optional<ExportInfo> e = Exports.find(admin, name);
        if (!force && e.isPresent() && !e.get().openers().isEmpty()) {
            throw new IllegalStateException("export '" + name + "' is open by " + e.get().openers().stream()
                    .map(RnbdServerAdmin.Opener::session).collect(Collectors.joining(", ")) + "; use --force");
        }
        for (Configuration c : configs) {
            c.delete();
        }
        out.println("export " + name + " removed");
    }
}

package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rnbd.command.completers.ExportNameCompleter;
import java.io.IOException;
import java.io.PrintStream;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/**
 * {@code rnbd:export-remove NAME}, a face of {@link RnbdServerAdmin#removeExport}: delete the
 * export's configuration; refused while clients have it open.
 */
@Service
@Command(scope = "rnbd", name = "export-remove", description = "Remove an export from the RNBD server (and its configuration)")
public class ExportRemoveCommand extends ConsoleCommand {
    @Reference(optional = true)
    RnbdServerAdmin admin;

    @Argument(index = 0, name = "name", description = "Export name", required = true)
    @Completion(ExportNameCompleter.class)
    String name;

    @Option(name = "--force", description = "Remove even while clients have the export open (their IO fails)")
    boolean force;

    @Override
    protected void run(PrintStream out) throws IOException {
        out.println(Exports.require(admin).removeExport(name, force).message());
    }
}

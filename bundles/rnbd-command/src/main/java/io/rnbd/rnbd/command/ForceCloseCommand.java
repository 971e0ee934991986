package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rnbd.command.completers.ExportNameCompleter;
import io.rnbd.rnbd.command.completers.OpenerSessionCompleter;
import java.io.IOException;
import java.io.PrintStream;
import java.util.stream.Collectors;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rnbd:force-close EXPORT SESSION} (rnbd-server sysfs force_close): close a client's open of an export. */
@Service
@Command(scope = "rnbd", name = "force-close",
        description = "Close a session's open of an export from the server side; the client's IO on it fails")
public class ForceCloseCommand extends ConsoleCommand {
    @Reference(optional = true)
    RnbdServerAdmin admin;

    @Argument(index = 0, name = "export", description = "Export name", required = true)
    @Completion(ExportNameCompleter.class)
    String export;

    @Argument(index = 1, name = "session", description = "Session that has the export open", required = true)
    @Completion(OpenerSessionCompleter.class)
    String session;

    @Override
    protected void run(PrintStream out) throws IOException {
        ExportInfo e = Exports.find(Exports.require(admin), export).orElseThrow(() -> new IllegalArgumentException(
                "no export '" + export + "'"));
        if (e.openers().stream().noneMatch(o -> o.session().equals(session))) {
            String openers = e.openers().stream().map(RnbdServerAdmin.Opener::session).collect(Collectors.joining(", "));
            throw new IllegalArgumentException("session '" + session + "' does not have " + export + " open"
                    + (openers.isEmpty() ? " (nobody has)" : " (open by " + openers + ")"));
        }
        admin.forceClose(export, session);
        out.println("export " + export + ": closed for session " + session);
    }
}

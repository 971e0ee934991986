package io.rnbd.rnbd.command.completers;

import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo;
import java.util.List;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.support.completers.StringsCompleter;

/** Completes the names of the server's exports. */
@Service
public class ExportNameCompleter implements Completer {
    @Reference(optional = true)
    RnbdServerAdmin admin;

    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        List<String> names = admin == null ? List.of() : admin.exports().stream().map(ExportInfo::name).toList();
        return new StringsCompleter(names).complete(session, commandLine, candidates);
    }
}

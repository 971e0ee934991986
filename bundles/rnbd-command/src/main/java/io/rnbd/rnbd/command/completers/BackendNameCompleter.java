package io.rnbd.rnbd.command.completers;

import io.rnbd.command.support.Providers;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import java.util.List;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.support.completers.StringsCompleter;

/** Completes the names of the block backends registered now (a bundle dropped into deploy/ too). */
@Service
public class BackendNameCompleter implements Completer {
    @Reference(optional = true)
    RnbdServerAdmin admin;

    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        return new StringsCompleter(names()).complete(session, commandLine, candidates);
    }

    List<String> names() {
        return admin == null ? List.of() : Providers.names(admin.backends());
    }
}

package io.rnbd.rnbd.command.completers;

import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.support.completers.StringsCompleter;

/** Completes the sessions that have the export named on the line open (or any export). */
@Service
public class OpenerSessionCompleter implements Completer {
    @Reference(optional = true)
    RnbdServerAdmin admin;

    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        return new StringsCompleter(sessions(Arrays.asList(commandLine.getArguments())))
                .complete(session, commandLine, candidates);
    }

    Set<String> sessions(List<String> words) {
        Set<String> all = new TreeSet<>();
        Set<String> named = new TreeSet<>();
        if (admin == null) {
            return all;
        }
        for (ExportInfo e : admin.exports()) {
            for (RnbdServerAdmin.Opener o : e.openers()) {
                all.add(o.session());
                if (words.contains(e.name())) {
                    named.add(o.session());
                }
            }
        }
        return named.isEmpty() ? all : named;
    }
}

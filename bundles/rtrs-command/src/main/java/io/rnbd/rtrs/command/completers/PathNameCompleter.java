package io.rnbd.rtrs.command.completers;

import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
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

/** Completes path names: those of the session named on the line, or of every session. */
@Service
public class PathNameCompleter implements Completer {
    @Reference(optional = true)
    RtrsClientAdmin admin;

    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        return new StringsCompleter(paths(Arrays.asList(commandLine.getArguments())))
                .complete(session, commandLine, candidates);
    }

    Set<String> paths(List<String> words) {
        Set<String> all = new TreeSet<>();
        Set<String> named = new TreeSet<>();
        if (admin == null) {
            return all;
        }
        for (RtrsClientSessionInfo s : admin.sessions()) {
            List<String> names = s.paths().stream().map(RtrsClientPathInfo::name).toList();
            all.addAll(names);
            if (words.contains(s.name())) {
                named.addAll(names);
            }
        }
        return named.isEmpty() ? all : named;
    }
}

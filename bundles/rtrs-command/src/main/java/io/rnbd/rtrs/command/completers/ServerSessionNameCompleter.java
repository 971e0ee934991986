package io.rnbd.rtrs.command.completers;

import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.rtrs.api.RtrsServerSessionInfo;
import java.util.List;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.support.completers.StringsCompleter;

/** Completes the names of the sessions connected to the RTRS server. */
@Service
public class ServerSessionNameCompleter implements Completer {
    @Reference(optional = true)
    RtrsServerAdmin admin;

    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        List<String> names = admin == null ? List.of()
                : admin.sessions().stream().map(RtrsServerSessionInfo::name).toList();
        return new StringsCompleter(names).complete(session, commandLine, candidates);
    }
}

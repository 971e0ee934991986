package io.rnbd.rnbd.command.completers;

import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import java.util.List;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.support.completers.StringsCompleter;

/** Completes the names of the RTRS client sessions a device can be mapped over. */
@Service
public class RtrsSessionCompleter implements Completer {
    @Reference(optional = true)
    RtrsClientAdmin admin;

    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        List<String> names = admin == null ? List.of()
                : admin.sessions().stream().map(RtrsClientSessionInfo::name).toList();
        return new StringsCompleter(names).complete(session, commandLine, candidates);
    }
}

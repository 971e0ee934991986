package io.rnbd.rtrs.auth.chap.command.completers;

import io.rnbd.rtrs.auth.chap.api.ChapKeyAdmin;
import io.rnbd.rtrs.auth.chap.api.ChapKeyInfo;
import java.util.List;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.support.completers.StringsCompleter;

/** Completes the host ids that have CHAP keys (nothing while the chap bundle is not running). */
@Service
public class HostIdCompleter implements Completer {
    @Reference(optional = true)
    ChapKeyAdmin admin;

    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        return new StringsCompleter(hostIds()).complete(session, commandLine, candidates);
    }

    List<String> hostIds() {
        ChapKeyAdmin a = admin;
        return a == null ? List.of() : a.list().stream().map(ChapKeyInfo::hostId).toList();
    }
}

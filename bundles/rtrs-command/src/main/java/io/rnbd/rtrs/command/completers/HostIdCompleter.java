package io.rnbd.rtrs.command.completers;

import io.rnbd.rtrs.command.AuthKeyStore;
import java.util.List;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.support.completers.StringsCompleter;

/** Completes the host ids that have CHAP keys (nothing while the chap bundle is absent). */
@Service
public class HostIdCompleter implements Completer {
    @Reference(optional = true)
    AuthKeyStore store;

    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        List<String> ids = store == null ? List.of() : store.list().stream().map(AuthKeyStore.KeyInfo::hostId).toList();
        return new StringsCompleter(ids).complete(session, commandLine, candidates);
    }
}

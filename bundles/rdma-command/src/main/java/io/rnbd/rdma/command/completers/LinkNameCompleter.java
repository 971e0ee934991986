package io.rnbd.rdma.command.completers;

import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RdmaLinkAdmin;

import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.support.completers.StringsCompleter;

import java.util.List;

/** Completes the names of configured soft links (for {@code rdma:link-del}). */
@Service
public class LinkNameCompleter implements Completer {
    @Reference
    RdmaLinkAdmin linkAdmin;

    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        StringsCompleter names = new StringsCompleter();
        try {
            names.getStrings().addAll(linkAdmin.links());
        } catch (RdmaException | RuntimeException e) {
            return -1;
        }
        return names.complete(session, commandLine, candidates);
    }
}

package io.rnbd.rtrs.command.completers;

import io.rnbd.command.support.Providers;
import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import java.util.ArrayList;
import java.util.List;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.support.completers.StringsCompleter;

/** Completes multipath policy names: those registered now (a bundle dropped into deploy/ too), then the appliance's own. */
@Service
public class MpPolicyCompleter implements Completer {
    @Reference(optional = true)
    RtrsClientAdmin admin;

    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        return new StringsCompleter(names()).complete(session, commandLine, candidates);
    }

    List<String> names() {
        List<String> names = new ArrayList<>(admin == null ? List.of() : Providers.names(admin.mpPolicies()));
        for (String own : List.of(MultipathPolicy.ROUND_ROBIN, MultipathPolicy.MIN_INFLIGHT, MultipathPolicy.MIN_LATENCY)) {
            if (!names.contains(own)) {
                names.add(own);
            }
        }
        return names;
    }
}

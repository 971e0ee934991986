package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Json;
import io.rnbd.command.support.Providers;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.command.completers.MpPolicyCompleter;
import io.rnbd.rtrs.command.completers.SessionNameCompleter;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/**
 * {@code rtrs:mp-policy SESSION [POLICY]}: show or choose the multipath policy (sysfs
 * mp_policy) by the name a registered policy service announces ({@code rtrs:mp-policies}), a
 * third-party bundle's as well as the appliance's own. As in the kernel, the appliance's own may
 * be given by number: 0 round-robin, 1 min-inflight, 2 min-latency.
 */
@Service
@Command(scope = "rtrs", name = "mp-policy", description = "Show or set the multipath policy of an RTRS client session")
public class MpPolicyCommand extends ConsoleCommand {
    static final List<String> POLICIES = List.of("round-robin", "min-inflight", "min-latency");

    @Reference(optional = true)
    RtrsClientAdmin admin;

    @Argument(index = 0, name = "session", description = "Session name", required = true)
    @Completion(SessionNameCompleter.class)
    String session;

    @Argument(index = 1, name = "policy", description = "A registered policy's name (rtrs:mp-policies), or "
            + "round-robin (0), min-inflight (1), min-latency (2); omit to show")
    @Completion(MpPolicyCompleter.class)
    String policy;

    @Option(name = "--json", description = "Print JSON instead of text")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        ClientSessions.session(admin, session);
        if (policy != null) {
            admin.setMpPolicy(session, policyName(policy, known(admin)));
        }
        RtrsClientSessionInfo s = ClientSessions.session(admin, session);
        if (json) {
            out.println(Json.write(Json.obj("session", s.name(), "mp_policy", s.mpPolicy(),
                    "active_mp_policy", s.activePolicy())));
        } else if (s.activePolicy() == null || s.activePolicy().equals(s.mpPolicy())) {
            out.println(s.name() + ": " + s.mpPolicy());
        } else {
            out.println(s.name() + ": " + s.mpPolicy() + " (not installed; using " + s.activePolicy() + ")");
        }
    }

    /** The names the client takes: those registered now, then the appliance's own three. */
    static List<String> known(RtrsClientAdmin admin) {
        List<String> known = new ArrayList<>(Providers.names(admin.mpPolicies()));
        POLICIES.stream().filter(p -> !known.contains(p)).forEach(known::add);
        return known;
    }

    /** {@code given} as one of {@code known} (case aside), or by the kernel's number. */
    static String policyName(String given, List<String> known) {
        String p = given.trim();
        if (p.matches("\\d+")) {
            int i = Integer.parseInt(p);
            if (i < POLICIES.size()) {
                return POLICIES.get(i);
            }
        } else {
            for (String k : known) {
                if (k.equalsIgnoreCase(p)) {
                    return k;
                }
            }
        }
        throw new IllegalArgumentException("unknown multipath policy '" + given + "' (" + String.join(", ", known)
                + ", or 0, 1, 2)");
    }
}

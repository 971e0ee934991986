package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Json;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.command.completers.SessionNameCompleter;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.completers.StringsCompleter;

/**
 * {@code rtrs:mp-policy SESSION [POLICY]}: show or choose the multipath policy (sysfs
 * mp_policy). As in the kernel, the policy may be given by number: 0 round-robin,
 * 1 min-inflight, 2 min-latency.
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

    @Argument(index = 1, name = "policy", description = "round-robin (0), min-inflight (1) or min-latency (2); omit to show")
    @Completion(value = StringsCompleter.class, values = {"round-robin", "min-inflight", "min-latency"})
    String policy;

    @Option(name = "--json", description = "Print JSON instead of text")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        ClientSessions.session(admin, session);
        if (policy != null) {
            admin.setMpPolicy(session, policyName(policy));
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

    static String policyName(String given) {
        String p = given.trim().toLowerCase(Locale.ROOT);
        if (p.matches("\\d+")) {
            int i = Integer.parseInt(p);
            if (i < POLICIES.size()) {
                return POLICIES.get(i);
            }
        } else if (POLICIES.contains(p)) {
            return p;
        }
        throw new IllegalArgumentException("unknown multipath policy '" + given + "' (round-robin, min-inflight, "
                + "min-latency, or 0, 1, 2)");
    }
}

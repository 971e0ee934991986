package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Formats;
import io.rnbd.command.support.Json;
import io.rnbd.command.support.TextTable;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import java.io.PrintStream;
import java.util.List;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rtrs:sessions}: the client sessions (the kernel's /sys/class/rtrs-client/). */
@Service
@Command(scope = "rtrs", name = "sessions", description = "List the RTRS client sessions")
public class SessionsCommand extends ConsoleCommand {
    @Reference(optional = true)
    RtrsClientAdmin admin;

    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        List<RtrsClientSessionInfo> sessions = ClientSessions.require(admin).sessions();
        if (json) {
            out.println(Json.write(sessions.stream().map(ClientSessions::json).toList()));
            return;
        }
        TextTable t = new TextTable("SESSION", "STATE", "PATHS", "QUEUE DEPTH", "MP POLICY", "MAX RECONNECT",
                "LAST ERROR");
        for (RtrsClientSessionInfo s : sessions) {
            String policy = s.activePolicy() == null || s.activePolicy().equals(s.mpPolicy()) ? s.mpPolicy()
                    : s.mpPolicy() + " (using " + s.activePolicy() + ")";
            t.row(s.name(), Formats.lower(s.state()), ClientSessions.connectedPaths(s) + "/" + s.paths().size(),
                    s.queueDepth(), policy, s.maxReconnectAttempts(), Formats.errno(s.lastError()));
        }
        t.print(out);
    }
}

package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Formats;
import io.rnbd.command.support.Json;
import io.rnbd.command.support.TextTable;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.command.completers.SessionNameCompleter;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rtrs:paths [SESSION]}: the paths of one or every session (…/&lt;session&gt;/paths/). */
@Service
@Command(scope = "rtrs", name = "paths", description = "List the paths of one or every RTRS client session")
public class PathsCommand extends ConsoleCommand {
    @Reference(optional = true)
    RtrsClientAdmin admin;

    @Argument(index = 0, name = "session", description = "Session name (default: every session)")
    @Completion(SessionNameCompleter.class)
    String session;

    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        List<RtrsClientSessionInfo> sessions = ClientSessions.sessions(admin, session);
        if (json) {
            List<Map<String, Object>> paths = new ArrayList<>();
            for (RtrsClientSessionInfo s : sessions) {
                for (RtrsClientPathInfo p : s.paths()) {
                    Map<String, Object> m = Json.obj("session", s.name());
                    m.putAll(ClientSessions.json(p));
                    paths.add(m);
                }
            }
            out.println(Json.write(paths));
            return;
        }
        TextTable t = new TextTable("SESSION", "PATH", "STATE", "HCA", "SRC", "DST", "RECONNECT ATTEMPTS",
                "INFLIGHT", "LAST ERROR");
        for (RtrsClientSessionInfo s : sessions) {
            for (RtrsClientPathInfo p : s.paths()) {
                t.row(s.name(), p.name(), Formats.lower(p.state()), p.device(), p.srcAddress(), p.dstAddress(),
                        p.reconnectAttempts(), p.stats() == null || p.stats().io() == null ? "" : p.stats().io().inflight(),
                        Formats.errno(p.lastError()));
            }
        }
        t.print(out);
    }
}

package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Formats;
import io.rnbd.command.support.Json;
import io.rnbd.command.support.TextTable;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.api.RtrsIoStats;
import io.rnbd.rtrs.api.RtrsPathStats;
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

/**
 * {@code rtrs:stats [SESSION] [--reset]}: per-path counters (sysfs stats/rdma, stats/reconnects,
 * stats/reset_all), of one or every session.
 */
@Service
@Command(scope = "rtrs", name = "stats", description = "Show (or reset) the IO counters of the paths of RTRS client sessions")
public class StatsCommand extends ConsoleCommand {
    private static final RtrsPathStats NONE = new RtrsPathStats(new RtrsIoStats(0, 0, 0, 0, 0), 0, 0, 0, 0, 0);

    @Reference(optional = true)
    RtrsClientAdmin admin;

    @Argument(index = 0, name = "session", description = "Session name (default: every session)")
    @Completion(SessionNameCompleter.class)
    String session;

    @Option(name = "--reset", description = "Zero the counters (sysfs reset_all) instead of showing them")
    boolean reset;

    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        List<RtrsClientSessionInfo> sessions = ClientSessions.sessions(admin, session);
        if (reset) {
            for (RtrsClientSessionInfo s : sessions) {
                admin.resetStats(s.name());
                out.println(s.name() + ": counters reset");
            }
            return;
        }
        if (json) {
            List<Map<String, Object>> rows = new ArrayList<>();
            for (RtrsClientSessionInfo s : sessions) {
                for (RtrsClientPathInfo p : s.paths()) {
                    rows.add(Json.obj("session", s.name(), "path", p.name(), "stats", ClientSessions.json(stats(p))));
                }
            }
            out.println(Json.write(rows));
            return;
        }
        TextTable t = new TextTable("SESSION", "PATH", "READS", "READ BYTES", "WRITES", "WRITE BYTES", "INFLIGHT",
                "FAILOVERS", "RECONNECTS OK/FAILED", "HB RTT us", "IO LATENCY us");
        for (RtrsClientSessionInfo s : sessions) {
            for (RtrsClientPathInfo p : s.paths()) {
                RtrsPathStats st = stats(p);
                RtrsIoStats io = st.io();
                t.row(s.name(), p.name(), io.reads(), io.readBytes(), io.writes(), io.writeBytes(), io.inflight(),
                        st.failovers(), st.reconnectsOk() + "/" + st.reconnectsFailed(),
                        Formats.micros(st.heartbeatRttNanos()), Formats.micros(st.ioLatencyNanos()));
            }
        }
        t.print(out);
    }

    private static RtrsPathStats stats(RtrsClientPathInfo p) {
        return p.stats() == null || p.stats().io() == null ? NONE : p.stats();
    }
}

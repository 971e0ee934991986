package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Listing;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.command.completers.SessionNameCompleter;
import io.rnbd.telemetry.api.Telemetry;
import java.io.PrintStream;
import java.util.List;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/**
 * {@code rtrs:stats [SESSION] [--reset]}: per-path counters (sysfs stats/rdma, stats/reconnects,
 * stats/reset_all), of one or every session; the counters of telemetry's rtrs_client_path.
 */
@Service
@Command(scope = "rtrs", name = "stats", description = "Show (or reset) the IO counters of the paths of RTRS client sessions")
public class StatsCommand extends ConsoleCommand {
    @Reference(optional = true)
    RtrsClientAdmin admin;

    @Reference(optional = true)
    Telemetry telemetry;

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
        Listing.of(Listing.read(telemetry, "rtrs_client_path")).where("session", session)
                .json("session", "name", "stats")
                .column("SESSION", "session").column("PATH", "path").column("READS", "reads")
                .column("READ BYTES", "read_bytes").column("WRITES", "writes").column("WRITE BYTES", "write_bytes")
                .column("INFLIGHT", "inflight").column("FAILOVERS", "failovers")
                .column("RECONNECTS OK/FAILED", r -> r.number("reconnects_ok") + "/" + r.number("reconnects_failed"))
                .column("TIMEOUTS", "request_timeouts")
                .column("HB RTT us", "hb_rtt_ns").column("IO LATENCY us", "io_latency_ns")
                .print(out, json);
    }
}

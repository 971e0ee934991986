package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Formats;
import io.rnbd.command.support.Listing;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.command.completers.SessionNameCompleter;
import io.rnbd.telemetry.api.Telemetry;
import java.io.PrintStream;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rtrs:paths [SESSION]}: the paths of one or every session (…/&lt;session&gt;/paths/); telemetry's rtrs_client_path. */
@Service
@Command(scope = "rtrs", name = "paths", description = "List the paths of one or every RTRS client session")
public class PathsCommand extends ConsoleCommand {
    @Reference(optional = true)
    RtrsClientAdmin admin;

    @Reference(optional = true)
    Telemetry telemetry;

    @Argument(index = 0, name = "session", description = "Session name (default: every session)")
    @Completion(SessionNameCompleter.class)
    String session;

    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        ClientSessions.sessions(admin, session);
        Listing.of(Listing.read(telemetry, "rtrs_client_path")).where("session", session)
                .column("SESSION", "session").column("PATH", "path").column("STATE", "state")
                .column("HCA", "hca_name").column("SRC", "src_addr").column("DST", "dst_addr")
                .column("RECONNECT ATTEMPTS", "reconnect_attempts").column("INFLIGHT", "inflight")
                .column("LAST ERROR", r -> Formats.errno((int) r.number("last_error")))
                .print(out, json);
    }
}

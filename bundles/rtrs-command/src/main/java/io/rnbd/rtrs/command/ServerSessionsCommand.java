package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Formats;
import io.rnbd.command.support.Listing;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.telemetry.api.Table;
import io.rnbd.telemetry.api.Telemetry;
import java.io.PrintStream;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/**
 * {@code rtrs:server-sessions}: the sessions clients hold on this server (/sys/class/rtrs-server/);
 * telemetry's rtrs_server_session, with --paths its rtrs_server_path.
 */
@Service
@Command(scope = "rtrs", name = "server-sessions", description = "List the sessions connected to the RTRS server")
public class ServerSessionsCommand extends ConsoleCommand {
    @Reference(optional = true)
    RtrsServerAdmin admin;

    @Reference(optional = true)
    Telemetry telemetry;

    @Option(name = "--paths", aliases = "-p", description = "One row per path instead of per session")
    boolean paths;

    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        ServerSessions.require(admin);
        Table pathTable = Listing.read(telemetry, "rtrs_server_path");
        if (paths && !json) {
            Listing.of(pathTable).column("SESSION", "session").column("PATH UUID", "path").column("HCA", "hca_name")
                    .column("LOCAL", "local_addr").column("REMOTE", "remote_addr")
                    .column("CONNECTIONS", "connections").column("INFLIGHT", "inflight").print(out, false);
            return;
        }
        Listing.of(Listing.read(telemetry, "rtrs_server_session")).nest("paths", pathTable)
                .column("SESSION", "session").column("HOST ID", "host_id")
                .column("PATHS", r -> r.children("paths").size()).column("QUEUE DEPTH", "queue_depth")
                .column("CHUNK", r -> Formats.bytes(r.number("chunk_size"))).column("READS", "reads")
                .column("WRITES", "writes").column("INFLIGHT", "inflight")
                .print(out, json);
    }
}

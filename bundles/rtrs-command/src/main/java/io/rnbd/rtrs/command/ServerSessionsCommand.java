package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Formats;
import io.rnbd.command.support.Json;
import io.rnbd.command.support.TextTable;
import io.rnbd.rtrs.api.RtrsIoStats;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.rtrs.api.RtrsServerPathInfo;
import io.rnbd.rtrs.api.RtrsServerSessionInfo;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rtrs:server-sessions}: the sessions clients hold on this server (/sys/class/rtrs-server/). */
@Service
@Command(scope = "rtrs", name = "server-sessions", description = "List the sessions connected to the RTRS server")
public class ServerSessionsCommand extends ConsoleCommand {
    @Reference(optional = true)
    RtrsServerAdmin admin;

    @Option(name = "--paths", aliases = "-p", description = "One row per path instead of per session")
    boolean paths;

    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        List<RtrsServerSessionInfo> sessions = ServerSessions.require(admin).sessions();
        if (json) {
            out.println(Json.write(sessions.stream().map(ServerSessionsCommand::json).toList()));
        } else if (paths) {
            TextTable t = new TextTable("SESSION", "PATH UUID", "HCA", "LOCAL", "REMOTE", "CONNECTIONS", "INFLIGHT");
            for (RtrsServerSessionInfo s : sessions) {
                for (RtrsServerPathInfo p : s.paths()) {
                    t.row(s.name(), p.uuid(), p.device(), p.localAddress(), p.remoteAddress(), p.connections(),
                            p.inflight());
                }
            }
            t.print(out);
        } else {
            TextTable t = new TextTable("SESSION", "HOST ID", "PATHS", "QUEUE DEPTH", "CHUNK", "READS", "WRITES",
                    "INFLIGHT");
            for (RtrsServerSessionInfo s : sessions) {
                RtrsIoStats io = s.stats() == null ? new RtrsIoStats(0, 0, 0, 0, 0) : s.stats();
                t.row(s.name(), s.hostId(), s.paths().size(), s.queueDepth(), Formats.bytes(s.chunkSize()),
                        io.reads(), io.writes(), io.inflight());
            }
            t.print(out);
        }
    }

    private static Map<String, Object> json(RtrsServerSessionInfo s) {
        RtrsIoStats io = s.stats();
        return Json.obj("name", s.name(), "host_id", s.hostId(), "uuid", s.uuid(), "queue_depth", s.queueDepth(),
                "chunk_size", s.chunkSize(),
                "paths", s.paths().stream().map(p -> Json.obj("uuid", p.uuid(), "hca_name", p.device(),
                        "local_addr", p.localAddress(), "remote_addr", p.remoteAddress(),
                        "connections", p.connections(), "inflight", p.inflight())).toList(),
                "stats", io == null ? null : Json.obj("reads", io.reads(), "read_bytes", io.readBytes(),
                        "writes", io.writes(), "write_bytes", io.writeBytes(), "inflight", io.inflight()));
    }
}

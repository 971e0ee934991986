package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Formats;
import io.rnbd.command.support.Listing;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.telemetry.api.Telemetry;
import java.io.PrintStream;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rtrs:sessions}: the client sessions (the kernel's /sys/class/rtrs-client/); telemetry's rtrs_client_session. */
@Service
@Command(scope = "rtrs", name = "sessions", description = "List the RTRS client sessions")
public class SessionsCommand extends ConsoleCommand {
    @Reference(optional = true)
    RtrsClientAdmin admin;

    @Reference(optional = true)
    Telemetry telemetry;

    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        ClientSessions.require(admin);
        Listing.of(Listing.read(telemetry, "rtrs_client_session"))
                .nest("paths", Listing.read(telemetry, "rtrs_client_path"))
                .column("SESSION", "session").column("STATE", "state")
                .column("PATHS", r -> r.children("paths").stream().filter(p -> "CONNECTED".equals(p.get("state")))
                        .count() + "/" + r.children("paths").size())
                .column("QUEUE DEPTH", "queue_depth")
                .column("MP POLICY", r -> r.text("active_mp_policy").isEmpty()
                        || r.text("active_mp_policy").equals(r.text("mp_policy")) ? r.text("mp_policy")
                        : r.text("mp_policy") + " (using " + r.text("active_mp_policy") + ")")
                .column("MAX RECONNECT", "max_reconnect_attempts")
                .column("LAST ERROR", r -> Formats.errno((int) r.number("last_error")))
                .print(out, json);
    }
}

package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Formats;
import io.rnbd.command.support.Listing;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.telemetry.api.Telemetry;
import java.io.PrintStream;
import java.util.stream.Collectors;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/**
 * {@code rnbd:exports}: the server's exports and who has them open (/sys/class/rnbd-server/);
 * telemetry's rnbd_export with its rnbd_export_opener rows.
 */
@Service
@Command(scope = "rnbd", name = "exports", description = "List the RNBD server's exports, their state and openers")
public class ExportsCommand extends ConsoleCommand {
    @Reference(optional = true)
    RnbdServerAdmin admin;

    @Reference(optional = true)
    Telemetry telemetry;

    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        Exports.require(admin);
        Listing.of(Listing.read(telemetry, "rnbd_export")).nest("openers", Listing.read(telemetry, "rnbd_export_opener"))
                .column("EXPORT", "export").column("BACKEND", "backend")
                .column("SIZE", r -> Formats.bytes(r.number("size"))).column("STATE", "state").column("RO", "read_only")
                .column("ROLE", r -> "NONE".equals(r.get("role")) ? "-" : r.shown("role"))
                .column("ACTIVE", ExportsCommand::active)
                .column("OPENED BY", r -> r.children("openers").stream()
                        .map(o -> o.text("session") + ":" + o.text("access_mode")).collect(Collectors.joining(",")))
                .column("READS", "reads").column("WRITES", "writes").column("ERRORS", "errors")
                .column("INFLIGHT", "inflight").column("LAST ERROR", "last_error")
                .print(out, json);
    }

    /** "B since 12:00:03 (generation 4, 2 takeovers here, last 131 ms)": who holds the storage of an ha export. */
    static String active(Listing.Row r) {
        if (RnbdServerAdmin.Role.NONE.name().equals(r.get("role"))) {
            return "-";
        }
        if (r.text("active_server").isEmpty()) {
            return "none";
        }
        long takeovers = r.number("takeovers");
        long last = r.number("last_takeover_ms");
        return r.text("active_server") + " since " + Formats.time(r.number("active_since_ms")) + " (generation "
                + r.number("generation") + ", " + takeovers + " takeover" + (takeovers == 1 ? "" : "s") + " here"
                + (last > 0 || takeovers > 0 ? ", last " + last + " ms" : "") + ")";
    }
}

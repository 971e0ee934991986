package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Formats;
import io.rnbd.command.support.Json;
import io.rnbd.command.support.TextTable;
import io.rnbd.rnbd.api.BlockIoStats;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rnbd:exports}: the server's exports and who has them open (/sys/class/rnbd-server/). */
@Service
@Command(scope = "rnbd", name = "exports", description = "List the RNBD server's exports, their state and openers")
public class ExportsCommand extends ConsoleCommand {
    @Reference(optional = true)
    RnbdServerAdmin admin;

    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        List<ExportInfo> exports = Exports.require(admin).exports();
        if (json) {
            out.println(Json.write(exports.stream().map(ExportsCommand::json).toList()));
            return;
        }
        TextTable t = new TextTable("EXPORT", "BACKEND", "SIZE", "STATE", "RO", "ROLE", "ACTIVE", "OPENED BY", "READS",
                "WRITES", "ERRORS", "INFLIGHT", "LAST ERROR");
        for (ExportInfo e : exports) {
            BlockIoStats st = Stats.orZero(e.stats());
            String openers = e.openers().stream().map(o -> o.session() + ":" + o.mode())
                    .collect(Collectors.joining(","));
            t.row(e.name(), e.backend(), Formats.bytes(e.size()), Formats.lower(e.state()), e.readOnly() ? "yes" : "no",
                    e.ha().role() == RnbdServerAdmin.Role.NONE ? "-" : Formats.lower(e.ha().role()), active(e.ha()),
                    openers, st.reads(), st.writes(), st.errors(), st.inflight(), e.lastError());
        }
        t.print(out);
    }

    /** "B since 12:00:03 (generation 4, 2 takeovers here, last 131 ms)": who holds the storage of an ha export. */
    static String active(RnbdServerAdmin.HaInfo ha) {
        if (ha.role() == RnbdServerAdmin.Role.NONE) {
            return "-";
        }
        if (ha.activeServer().isEmpty()) {
            return "none";
        }
        return ha.activeServer() + " since " + Formats.time(ha.activeSince()) + " (generation " + ha.generation()
                + ", " + ha.takeovers() + " takeover" + (ha.takeovers() == 1 ? "" : "s") + " here"
                + (ha.lastTakeoverMs() > 0 || ha.takeovers() > 0 ? ", last " + ha.lastTakeoverMs() + " ms" : "") + ")";
    }

    private static Map<String, Object> json(ExportInfo e) {
        return Json.obj("name", e.name(), "backend", e.backend(), "size", e.size(), "state", e.state(),
                "read_only", e.readOnly(),
                "ha", Json.obj("role", e.ha().role(), "active_server", e.ha().activeServer(), "active_since",
                        e.ha().activeSince(), "generation", e.ha().generation(), "takeovers", e.ha().takeovers(),
                        "last_takeover_ms", e.ha().lastTakeoverMs()),
                "openers", e.openers().stream().map(o -> Json.obj("session", o.session(), "access_mode", o.mode(),
                        "device_id", o.deviceId())).toList(),
                "stats", Stats.json(e.stats()), "last_error", e.lastError());
    }
}

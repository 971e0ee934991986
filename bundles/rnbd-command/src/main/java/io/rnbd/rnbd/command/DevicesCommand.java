package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Formats;
import io.rnbd.command.support.Json;
import io.rnbd.command.support.TextTable;
import io.rnbd.rnbd.api.BlockIoStats;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceInfo;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import java.io.PrintStream;
import java.util.List;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rnbd:devices}: the mapped devices (/sys/class/rnbd-client/ctl/devices/). */
@Service
@Command(scope = "rnbd", name = "devices", description = "List the mapped devices, their state and IO counters")
public class DevicesCommand extends ConsoleCommand {
    @Reference(optional = true)
    RnbdClientAdmin admin;

    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        List<DeviceInfo> devices = ClientDevices.require(admin).devices();
        if (json) {
            out.println(Json.write(devices.stream().map(ClientDevices::json).toList()));
            return;
        }
        TextTable t = new TextTable("DEVICE", "SESSION", "EXPORT", "MODE", "SIZE", "STATE", "USERS", "ACTIVE",
                "READS", "WRITES", "ERRORS", "INFLIGHT", "LAST ERROR");
        for (DeviceInfo d : devices) {
            BlockIoStats st = Stats.orZero(d.stats());
            t.row(d.name(), d.ha().sessions().isEmpty() ? d.session() : String.join(",", d.ha().sessions()), d.export(),
                    d.mode(), Formats.bytes(d.size()), Formats.lower(d.state()), d.users(), ClientDevices.active(d),
                    st.reads(), st.writes(), st.errors(), st.inflight(), Formats.errno(d.lastError()));
        }
        t.print(out);
    }
}

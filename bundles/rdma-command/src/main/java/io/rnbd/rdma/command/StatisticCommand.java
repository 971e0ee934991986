package io.rnbd.rdma.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Json;
import io.rnbd.command.support.TextTable;
import io.rnbd.rdma.api.RdmaAdmin;
import io.rnbd.rdma.api.RdmaDeviceInfo;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

import java.io.PrintStream;
import java.util.List;
import java.util.Map;

/** {@code rdma:statistic} — the providers' per-device counters (rdma statistic show). */
@Service
@Command(scope = "rdma", name = "statistic", description = "Show the counters RDMA providers keep per device")
public class StatisticCommand extends ConsoleCommand {
    @Argument(index = 0, name = "device", description = "Only this device (default: every device)")
    String device;

    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Reference(optional = true)
    RdmaAdmin admin;

    void setAdmin(RdmaAdmin admin) {
        this.admin = admin;
    }

    @Override
    protected void run(PrintStream o) {
        List<RdmaDeviceInfo> devices = DevicesCommand.devices(admin, o);
        if (devices == null) {
            return;
        }
        if (device != null) {
            devices = devices.stream().filter(d -> d.name().equals(device)).toList();
            if (devices.isEmpty()) {
                o.println("Error: ENODEV: no RDMA device named " + device);
                return;
            }
        }
        if (json) {
            o.println(Json.write(devices.stream().map(d -> Json.obj("name", d.name(), "provider", d.provider(),
                    "counters", d.counters())).toList()));
            return;
        }
        TextTable table = new TextTable("DEVICE", "COUNTER", "VALUE");
        for (RdmaDeviceInfo d : devices) {
            if (d.counters().isEmpty()) {
                table.row(d.name(), "-", "-"); // the provider keeps none (DiSNI)
            }
            for (Map.Entry<String, Long> c : d.counters().entrySet()) {
                table.row(d.name(), c.getKey(), Long.toString(c.getValue()));
            }
        }
        table.print(o);
    }
}

package io.rnbd.rdma.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Listing;
import io.rnbd.rdma.api.RdmaAdmin;
import io.rnbd.rdma.api.RdmaDeviceInfo;
import io.rnbd.telemetry.api.Telemetry;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.table.ShellTable;

import java.io.PrintStream;
import java.util.List;
import java.util.Map;

/** {@code rdma:statistic} — the providers' per-device counters (rdma statistic show); the counters of telemetry's rdma_device. */
@Service
@Command(scope = "rdma", name = "statistic", description = "Show the counters RDMA providers keep per device")
public class StatisticCommand extends ConsoleCommand {
    @Argument(index = 0, name = "device", description = "Only this device (default: every device)")
    String device;

    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Reference(optional = true)
    RdmaAdmin admin;

    @Reference(optional = true)
    Telemetry telemetry;

    void setAdmin(RdmaAdmin admin) {
        this.admin = admin;
    }

    @Override
    protected void run(PrintStream o) {
        List<RdmaDeviceInfo> devices = DevicesCommand.devices(admin, o);
        if (devices == null) {
            return;
        }
        if (device != null && devices.stream().noneMatch(d -> d.name().equals(device))) {
            o.println("Error: ENODEV: no RDMA device named " + device);
            return;
        }
        Listing listing = Listing.of(Listing.read(telemetry, "rdma_device")).where("device", device)
                .json("name", "provider", "counters");
        if (json) {
            listing.print(o, true);
            return;
        }
        // one row per counter, as rdma statistic show prints them
        ShellTable table = new ShellTable();
        table.column("DEVICE");
        table.column("COUNTER");
        table.column("VALUE");
        for (Listing.Row d : listing.rows()) {
            @SuppressWarnings("unchecked")
            Map<String, Long> counters = (Map<String, Long>) d.get("counters");
            if (counters == null || counters.isEmpty()) {
                table.addRow().addContent(d.text("device"), "-", "-"); // the provider keeps none (DiSNI)
                continue;
            }
            for (Map.Entry<String, Long> c : counters.entrySet()) {
                table.addRow().addContent(d.text("device"), c.getKey(), Long.toString(c.getValue()));
            }
        }
        table.print(o);
    }
}

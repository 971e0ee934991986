package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Formats;
import io.rnbd.command.support.Listing;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.telemetry.api.Telemetry;
import java.io.PrintStream;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rnbd:devices}: the mapped devices (/sys/class/rnbd-client/ctl/devices/); telemetry's rnbd_device. */
@Service
@Command(scope = "rnbd", name = "devices", description = "List the mapped devices, their state and IO counters")
public class DevicesCommand extends ConsoleCommand {
    @Reference(optional = true)
    RnbdClientAdmin admin;

    @Reference(optional = true)
    Telemetry telemetry;

    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        ClientDevices.require(admin);
        Listing.of(Listing.read(telemetry, "rnbd_device")).column("DEVICE", "device")
                .column("SESSION", r -> r.list("sessions").isEmpty() ? r.text("session")
                        : String.join(",", r.list("sessions")))
                .column("EXPORT", "export").column("MODE", "access_mode")
                .column("SIZE", r -> Formats.bytes(r.number("size"))).column("STATE", "state")
                .column("USERS", "users").column("ACTIVE", ClientDevices::active).column("READS", "reads")
                .column("WRITES", "writes").column("ERRORS", "errors").column("INFLIGHT", "inflight")
                .column("LAST ERROR", r -> Formats.errno((int) r.number("last_error")))
                .print(out, json);
    }
}

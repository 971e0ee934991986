package io.rnbd.rdma.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Listing;
import io.rnbd.rdma.api.RdmaAdmin;
import io.rnbd.rdma.api.RdmaDeviceInfo;
import io.rnbd.telemetry.api.Telemetry;

import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

import java.io.PrintStream;
import java.util.List;

/** {@code rdma:devices} — the registry's devices and the IB clients holding them (rdma dev show); telemetry's rdma_device. */
@Service
@Command(scope = "rdma", name = "devices", description = "List RDMA devices, their state and the IB clients using them")
public class DevicesCommand extends ConsoleCommand {
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
        if (devices(admin, o) == null) {
            return;
        }
        Listing.of(Listing.read(telemetry, "rdma_device"))
                .column("NAME", "device").column("PROVIDER", "provider").column("STATE", r -> r.text("state"))
                .column("NODE", "node_id").column("ADDRESSES", r -> String.join(",", r.list("addresses")))
                .column("CLIENTS", "clients")
                .print(o, json);
    }

    /** The registry's devices, or null after printing why there are none to show. */
    static List<RdmaDeviceInfo> devices(RdmaAdmin admin, PrintStream o) {
        if (admin == null) {
            o.println("Error: the RDMA device registry (rdma-core) is not running");
            return null;
        }
        try {
            return admin.devices();
        } catch (RuntimeException e) {
            o.println("Error: " + e.getMessage());
            return null;
        }
    }
}

package io.rnbd.rdma.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Json;
import io.rnbd.command.support.TextTable;
import io.rnbd.rdma.api.RdmaAdmin;
import io.rnbd.rdma.api.RdmaDeviceInfo;

import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

import java.io.PrintStream;
import java.util.List;

/** {@code rdma:devices} — the registry's devices and the IB clients holding them (rdma dev show). */
@Service
@Command(scope = "rdma", name = "devices", description = "List RDMA devices, their state and the IB clients using them")
public class DevicesCommand extends ConsoleCommand {
    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Reference(optional = true)
    RdmaAdmin admin;

    void setAdmin(RdmaAdmin admin) {
        this.admin = admin;
    }

    @Override
    protected void run(PrintStream o) {
        List<RdmaDeviceInfo> devices = devices(admin, o);
        if (devices == null) {
            return;
        }
        if (json) {
            o.println(toJson(devices));
            return;
        }
        TextTable table = new TextTable("NAME", "PROVIDER", "STATE", "NODE", "ADDRESSES", "CLIENTS");
        for (RdmaDeviceInfo d : devices) {
            table.row(d.name(), d.provider(), d.linkState().name(), d.nodeId(), String.join(",", d.addresses()),
                    d.clients().isEmpty() ? "-" : String.join(",", d.clients()));
        }
        table.print(o);
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

    static String toJson(List<RdmaDeviceInfo> devices) {
        return Json.write(devices.stream().map(d -> Json.obj("name", d.name(), "provider", d.provider(),
                "node_id", d.nodeId(), "state", d.linkState().name(), "addresses", d.addresses(),
                "clients", d.clients())).toList());
    }
}

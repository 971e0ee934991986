package io.rnbd.rdma.command;

import io.rnbd.rdma.api.RdmaAdmin;
import io.rnbd.rdma.api.RdmaDeviceInfo;

import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/** {@code rdma:devices} — the registry's devices and the IB clients holding them (rdma dev show). */
@Service
@Command(scope = "rdma", name = "devices", description = "List RDMA devices, their state and the IB clients using them")
public class DevicesCommand implements Action {
    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Reference(optional = true)
    RdmaAdmin admin;

    private PrintStream out;

    void setAdmin(RdmaAdmin admin) {
        this.admin = admin;
    }

    void setOut(PrintStream out) {
        this.out = out;
    }

    @Override
    public Object execute() {
        PrintStream o = out != null ? out : System.out;
        if (admin == null) {
            o.println("Error: the RDMA device registry (rdma-core) is not running");
            return null;
        }
        List<RdmaDeviceInfo> devices;
        try {
            devices = admin.devices();
        } catch (RuntimeException e) {
            o.println("Error: " + e.getMessage());
            return null;
        }
        if (json) {
            o.println(toJson(devices));
            return null;
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"NAME", "PROVIDER", "STATE", "NODE", "ADDRESSES", "CLIENTS"});
        for (RdmaDeviceInfo d : devices) {
            rows.add(new String[] {d.name(), d.provider(), d.linkState().name(), d.nodeId(),
                String.join(",", d.addresses()), d.clients().isEmpty() ? "-" : String.join(",", d.clients())});
        }
        Text.table(o, rows);
        return null;
    }

    static String toJson(List<RdmaDeviceInfo> devices) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < devices.size(); i++) {
            RdmaDeviceInfo d = devices.get(i);
            b.append(i == 0 ? "" : ",").append('{')
                    .append("\"name\":").append(Text.quote(d.name()))
                    .append(",\"provider\":").append(Text.quote(d.provider()))
                    .append(",\"node_id\":").append(Text.quote(d.nodeId()))
                    .append(",\"state\":").append(Text.quote(d.linkState().name()))
                    .append(",\"addresses\":").append(Text.array(d.addresses()))
                    .append(",\"clients\":").append(Text.array(d.clients()))
                    .append('}');
        }
        return b.append(']').toString();
    }
}

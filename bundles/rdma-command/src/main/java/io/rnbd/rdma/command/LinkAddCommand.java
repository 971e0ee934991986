package io.rnbd.rdma.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RdmaLinkAdmin;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

import java.io.PrintStream;

/** {@code rdma:link-add NAME ADDRESS} — create a soft RDMA device (rdma link add NAME type siw). */
@Service
@Command(scope = "rdma", name = "link-add", description = "Create a soft RDMA device on a local IP address (persisted)")
public class LinkAddCommand extends ConsoleCommand {
    @Argument(index = 0, name = "name", description = "Device name, e.g. soft0", required = true)
    String name;

    @Argument(index = 1, name = "address", description = "Local IP address, e.g. 127.0.0.1", required = true)
    String address;

    @Reference(optional = true)
    RdmaLinkAdmin linkAdmin;

    void setLinkAdmin(RdmaLinkAdmin linkAdmin) {
        this.linkAdmin = linkAdmin;
    }

    @Override
    protected void run(PrintStream o) {
        if (linkAdmin == null) {
            o.println("Error: the soft RDMA provider (rdma-soft) is not running");
            return;
        }
        try {
            linkAdmin.addLink(name, address);
            o.println("Added " + linkAdmin.provider() + " link " + name + " on " + address.trim());
        } catch (RdmaException | RuntimeException e) {
            o.println("Error: " + e.getMessage());
        }
    }
}

package io.rnbd.rdma.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RdmaLinkAdmin;
import io.rnbd.rdma.command.completers.LinkNameCompleter;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

import java.io.PrintStream;

/** {@code rdma:link-del NAME} — delete a soft RDMA device; its IB clients let go first. */
@Service
@Command(scope = "rdma", name = "link-del", description = "Delete a soft RDMA device (its users get remove first)")
public class LinkDelCommand extends ConsoleCommand {
    @Argument(index = 0, name = "name", description = "Device name", required = true)
    @Completion(LinkNameCompleter.class)
    String name;

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
            linkAdmin.deleteLink(name);
            o.println("Deleted " + linkAdmin.provider() + " link " + name);
        } catch (RdmaException | RuntimeException e) {
            o.println("Error: " + e.getMessage());
        }
    }
}

package io.rnbd.rdma.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RdmaLinkAdmin;

import org.apache.karaf.shell.api.action.lifecycle.Reference;

import java.io.PrintStream;

/** What rdma:link-add and rdma:link-del share: the soft provider's link admin, if it runs. */
abstract class LinkCommand extends ConsoleCommand {
    @Reference(optional = true)
    RdmaLinkAdmin linkAdmin;

    void setLinkAdmin(RdmaLinkAdmin linkAdmin) {
        this.linkAdmin = linkAdmin;
    }

    /** Makes the change and returns the line that reports it. */
    abstract String change(RdmaLinkAdmin admin) throws RdmaException;

    @Override
    protected void run(PrintStream o) {
        if (linkAdmin == null) {
            o.println("Error: the soft RDMA provider (rdma-soft) is not running");
            return;
        }
        try {
            o.println(change(linkAdmin));
        } catch (RdmaException | RuntimeException e) {
            // the admin's messages already start with the errno name ("EEXIST: link soft0 ...")
            o.println("Error: " + e.getMessage());
        }
    }
}

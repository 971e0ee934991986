package io.rnbd.rdma.command;

import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RdmaLinkAdmin;
import io.rnbd.rdma.command.completers.LinkNameCompleter;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rdma:link-del NAME} — delete a soft RDMA device; its IB clients let go first. */
@Service
@Command(scope = "rdma", name = "link-del", description = "Delete a soft RDMA device (its users get remove first)")
public class LinkDelCommand extends LinkCommand {
    @Argument(index = 0, name = "name", description = "Device name", required = true)
    @Completion(LinkNameCompleter.class)
    String name;

    @Override
    String change(RdmaLinkAdmin admin) throws RdmaException {
        admin.deleteLink(name);
        return "Deleted " + admin.provider() + " link " + name;
    }
}

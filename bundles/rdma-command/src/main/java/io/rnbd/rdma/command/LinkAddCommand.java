package io.rnbd.rdma.command;

import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RdmaLinkAdmin;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rdma:link-add NAME ADDRESS} — create a soft RDMA device (rdma link add NAME type siw). */
@Service
@Command(scope = "rdma", name = "link-add", description = "Create a soft RDMA device on a local IP address (persisted)")
public class LinkAddCommand extends LinkCommand {
    @Argument(index = 0, name = "name", description = "Device name, e.g. soft0", required = true)
    String name;

    @Argument(index = 1, name = "address", description = "Local IP address, e.g. 127.0.0.1", required = true)
    String address;

    @Override
    String change(RdmaLinkAdmin admin) throws RdmaException {
        admin.addLink(name, address);
        return "Added " + admin.provider() + " link " + name + " on " + address.trim();
    }
}

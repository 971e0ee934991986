package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.command.completers.MappedDeviceCompleter;
import java.io.IOException;
import java.io.PrintStream;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/**
 * {@code rnbd:failback DEVICE [--to SESSION]}: move a device mapped over several servers back
 * to its first session's server (or to {@code --to}): that server takes the storage over,
 * fencing the one that held it. A device never moves back by itself.
 */
@Service
@Command(scope = "rnbd", name = "failback", description = "Move a device mapped over several servers to its first "
        + "server (or --to another): that server takes the storage over")
public class FailbackCommand extends ConsoleCommand {
    @Reference(optional = true)
    RnbdClientAdmin admin;

    @Argument(index = 0, name = "device", description = "Device mapped over several sessions", required = true)
    @Completion(MappedDeviceCompleter.class)
    String device;

    @Option(name = "--to", description = "The session whose server takes over (default: the first of the mapping)")
    String to;

    long timeoutMillis = 30_000;

    @Override
    protected void run(PrintStream out) throws IOException {
        ClientDevices.device(admin, device);
        String session = Futures.await(admin.failback(device, to == null ? "" : to), timeoutMillis, device,
                "the server's takeover");
        out.println(device + ": IO goes to session " + session + "; "
                + ClientDevices.active(ClientDevices.device(admin, device)));
    }
}

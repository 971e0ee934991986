package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.command.completers.MappedDeviceCompleter;
import java.io.IOException;
import java.io.PrintStream;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rnbd:remap DEVICE} (sysfs remap_device): open the device on the server again ({@link RnbdClientAdmin#remapDevice}). */
@Service
@Command(scope = "rnbd", name = "remap", description = "Open a mapped device on the server again (after a failure)")
public class RemapCommand extends ConsoleCommand {
    @Reference(optional = true)
    RnbdClientAdmin admin;

    @Argument(index = 0, name = "device", description = "Mapped device name", required = true)
    @Completion(MappedDeviceCompleter.class)
    String device;

    @Override
    protected void run(PrintStream out) throws IOException {
        out.println(ClientDevices.require(admin).remapDevice(device).message());
    }
}

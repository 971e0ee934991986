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

/** {@code rnbd:resize DEVICE} (sysfs resize): adopt the export's current size from the server ({@link RnbdClientAdmin#resizeDevice}). */
@Service
@Command(scope = "rnbd", name = "resize", description = "Ask the server for the export's size and adopt it")
public class ResizeCommand extends ConsoleCommand {
    @Reference(optional = true)
    RnbdClientAdmin admin;

    @Argument(index = 0, name = "device", description = "Mapped device name", required = true)
    @Completion(MappedDeviceCompleter.class)
    String device;

    @Override
    protected void run(PrintStream out) throws IOException {
        out.println(ClientDevices.require(admin).resizeDevice(device).message());
    }
}

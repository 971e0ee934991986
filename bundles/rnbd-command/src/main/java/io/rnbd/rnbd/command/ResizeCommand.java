package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Formats;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.command.completers.MappedDeviceCompleter;
import java.io.IOException;
import java.io.PrintStream;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rnbd:resize DEVICE} (sysfs resize): adopt the export's current size from the server. */
@Service
@Command(scope = "rnbd", name = "resize", description = "Ask the server for the export's size and adopt it")
public class ResizeCommand extends ConsoleCommand {
    @Reference(optional = true)
    RnbdClientAdmin admin;

    @Argument(index = 0, name = "device", description = "Mapped device name", required = true)
    @Completion(MappedDeviceCompleter.class)
    String device;

    long timeoutMillis = 10_000;

    @Override
    protected void run(PrintStream out) throws IOException {
        String state = device + " is " + Formats.lower(ClientDevices.device(admin, device).state());
        long size = Futures.await(admin.resize(device), timeoutMillis, device, state);
        out.println(device + ": " + Formats.bytes(size) + " (" + size + " bytes)");
    }
}

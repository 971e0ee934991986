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
 * {@code rnbd:unmap DEVICE [--force]} (sysfs unmap_device normal|force), a face of
 * {@link RnbdClientAdmin#unmapDevice}: the client unmaps first, so a refusal (EBUSY: IO in
 * flight or users) leaves the configuration in place; then the configuration goes, so the
 * device does not come back after a restart.
 */
@Service
@Command(scope = "rnbd", name = "unmap", description = "Unmap a device (refused while in use unless --force)")
public class UnmapCommand extends ConsoleCommand {
    @Reference(optional = true)
    RnbdClientAdmin admin;

    @Argument(index = 0, name = "device", description = "Mapped device name", required = true)
    @Completion(MappedDeviceCompleter.class)
    String device;

    @Option(name = "--force", aliases = "-f", description = "Unmap even while IO is in flight or users hold the device")
    boolean force;

    @Override
    protected void run(PrintStream out) throws IOException {
        out.println(ClientDevices.require(admin).unmapDevice(device, force).message());
    }
}

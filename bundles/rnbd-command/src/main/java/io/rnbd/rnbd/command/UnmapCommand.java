package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceInfo;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.command.completers.MappedDeviceCompleter;
import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.Optional;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * {@code rnbd:unmap DEVICE [--force]} (sysfs unmap_device normal|force). The client unmaps
 * first, so a refusal (EBUSY: IO in flight or users) leaves the configuration in place; then
 * the configuration goes, so the device does not come back after a restart.
 */
@Service
@Command(scope = "rnbd", name = "unmap", description = "Unmap a device (refused while in use unless --force)")
public class UnmapCommand extends ConsoleCommand {
    @Reference(optional = true)
    ConfigurationAdmin configAdmin;

    @Reference(optional = true)
    RnbdClientAdmin admin;

    @Argument(index = 0, name = "device", description = "Mapped device name", required = true)
    @Completion(MappedDeviceCompleter.class)
    String device;

    @Option(name = "--force", aliases = "-f", description = "Unmap even while IO is in flight or users hold the device")
    boolean force;

    @Override
    protected void run(PrintStream out) throws IOException {
        List<Configuration> configs = Configs.find(Configs.require(configAdmin), Configs.MAP_PID, "device.name", device);
        Optional<DeviceInfo> mapped = admin == null ? Optional.empty() : ClientDevices.find(admin, device);
        if (configs.isEmpty() && mapped.isEmpty()) {
            if (admin != null) {
                ClientDevices.device(admin, device); // throws, naming the devices there are
            }
            throw new IllegalArgumentException("no mapped device '" + device + "'");
        }
        if (mapped.isPresent()) {
            try {
                admin.unmap(device, force);
            } catch (IOException e) {
                throw new IOException(device + ": " + ConsoleCommand.message(e)
                        + (force ? "" : " (rnbd:unmap --force " + device + " unmaps anyway)"));
            }
        }
        for (Configuration c : configs) {
            c.delete();
        }
        out.println(device + " unmapped");
    }
}

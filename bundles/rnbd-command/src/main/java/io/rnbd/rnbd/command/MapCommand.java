package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.api.RnbdClientAdmin.MapRequest;
import io.rnbd.rnbd.command.completers.RtrsSessionCompleter;
import java.io.IOException;
import java.io.PrintStream;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.completers.StringsCompleter;

/**
 * {@code rnbd:map DEVICE --session S --export E [--mode RW]} (sysfs map_device), a face of
 * {@link RnbdClientAdmin#mapDevice}: the mapping is kept in ConfigAdmin (factory PID
 * {@code io.rnbd.client.map}), so it comes back after a restart, and the state the client
 * reaches within a few seconds is printed. {@code --session a,b} maps over several servers
 * that export the same storage, one session each (docs/scale-out.md).
 */
@Service
@Command(scope = "rnbd", name = "map", description = "Map a server's export as a local device (kept in ConfigAdmin)")
public class MapCommand extends ConsoleCommand {
    @Reference(optional = true)
    RnbdClientAdmin admin;

    @Argument(index = 0, name = "device", description = "Local device name, e.g. rnbd0", required = true)
    String device;

    @Option(name = "--session", aliases = "-s", description = "RTRS client session to map over (required); several, "
            + "comma separated, one per server of an export those servers serve together (ha = true on each)")
    @Completion(RtrsSessionCompleter.class)
    String session;

    @Option(name = "--export", aliases = "-e", description = "Export name on the server (required)")
    String export;

    @Option(name = "--mode", aliases = "-m", description = "Access mode: RO, RW or MIGRATION")
    @Completion(value = StringsCompleter.class, values = {"RO", "RW", "MIGRATION"})
    String mode = "RW";

    @Override
    protected void run(PrintStream out) throws IOException {
        if (session == null || export == null) {
            throw new IllegalArgumentException("--session and --export are required");
        }
        out.println(ClientDevices.require(admin).mapDevice(MapRequest.parse(device, session, export, mode)).message());
    }
}

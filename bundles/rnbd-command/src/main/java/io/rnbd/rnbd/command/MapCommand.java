package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Formats;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceInfo;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceState;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.command.completers.RtrsSessionCompleter;
import java.io.IOException;
import java.io.PrintStream;
import java.util.Hashtable;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.completers.StringsCompleter;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * {@code rnbd:map DEVICE --session S --export E [--mode RW]} (sysfs map_device): a factory
 * configuration of {@code io.rnbd.client.map}, so the mapping comes back after a restart;
 * then the state the client reaches within a few seconds. {@code --session a,b} maps over
 * several servers that export the same storage, one session each (docs/scale-out.md).
 */
@Service
@Command(scope = "rnbd", name = "map", description = "Map a server's export as a local device (kept in ConfigAdmin)")
public class MapCommand extends ConsoleCommand {
    private static final List<DeviceState> SETTLED = List.of(DeviceState.MAPPED, DeviceState.FAILED);

    @Reference(optional = true)
    ConfigurationAdmin configAdmin;

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

    /** How long to wait for the OPEN's outcome, for the report. */
    long waitMillis = 5000;

    @Override
    protected void run(PrintStream out) throws IOException {
        Configs.requireName("device", device);
        if (session == null || export == null) {
            throw new IllegalArgumentException("--session and --export are required");
        }
        List<String> sessions = java.util.Arrays.stream(session.split(",", -1)).map(String::trim).toList();
        for (String s : sessions) {
            Configs.requireName("session", s);
        }
        if (sessions.stream().distinct().count() != sessions.size()) {
            throw new IllegalArgumentException("--session lists a session twice: " + session);
        }
        if (sessions.size() > 1 && accessMode(mode) == AccessMode.RO) {
            throw new IllegalArgumentException("a read-only mapping needs no active server: map it over one session");
        }
        session = String.join(",", sessions);
        Configs.requireExportName("export", export);
        AccessMode m = accessMode(mode);
        Configs.require(configAdmin);
        Optional<DeviceInfo> existing = admin == null ? Optional.empty() : ClientDevices.find(admin, device);
        if (existing.isPresent() || !Configs.find(configAdmin, Configs.MAP_PID, "device.name", device).isEmpty()) {
            throw new IllegalArgumentException("device '" + device + "' is already mapped"
                    + existing.map(d -> " (export " + d.export() + " over session " + d.session() + ")").orElse(""));
        }
        // the client refuses this with EEXIST inside its component's activation, where the
        // console would never see it: say it here, before anything is configured
        for (String s : sessions) {
            Optional<DeviceInfo> twin = admin == null ? Optional.empty() : admin.devices().stream()
                    .filter(d -> (d.session().equals(s) || d.ha().sessions().contains(s)) && d.export().equals(export))
                    .findFirst();
            if (twin.isPresent()) {
                throw new IllegalArgumentException("export " + export + " is already mapped over session " + s
                        + " as " + twin.get().name());
            }
        }
        Hashtable<String, Object> p = new Hashtable<>();
        p.put("device.name", device);
        p.put("session.name", session);
        p.put("export.name", export);
        p.put("access.mode", m.name());
        Configuration c = configAdmin.createFactoryConfiguration(Configs.MAP_PID, Configs.ANY_LOCATION);
        c.update(p);
        if (admin == null) {
            out.println(device + " configured; the RNBD client is not running (bundle rnbd-client), it maps "
                    + device + " when it starts");
            return;
        }
        Optional<DeviceInfo> d = Poll.until(() -> ClientDevices.find(admin, device),
                i -> SETTLED.contains(i.state()), waitMillis);
        if (d.isEmpty()) {
            // the client's mapping component failed to start (its log says why): a
            // configuration without a device would only come back failing after a restart
            c.delete();
            throw new IllegalStateException(device + ": the RNBD client did not take the mapping within "
                    + waitMillis + " ms (see the log); nothing was configured");
        } else if (d.get().state() == DeviceState.FAILED) {
            throw new IllegalStateException(device + ": the server refused to open " + export + ": "
                    + Formats.errno(d.get().lastError()) + "; the mapping stays configured: rnbd:remap " + device
                    + " retries, rnbd:unmap " + device + " drops it");
        } else if (d.get().state() == DeviceState.MAPPED) {
            out.println(device + " mapped: " + export + " over " + session + ", " + m + ", "
                    + Formats.bytes(d.get().size()) + (sessions.size() > 1 ? "; active: " + ClientDevices.active(d.get())
                    : ""));
        } else {
            out.println(device + " " + Formats.lower(d.get().state()) + ": waiting for session " + session
                    + "; it maps when the session connects");
        }
    }

    static AccessMode accessMode(String text) {
        try {
            return AccessMode.valueOf(text.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("access mode must be RO, RW or MIGRATION, not '" + text + "'");
        }
    }
}

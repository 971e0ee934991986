package io.rnbd.rnbd.command.completers;

import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceInfo;
import java.util.List;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.support.completers.StringsCompleter;

/**
 * Completes every mapping the client knows, failed and pending ones included (unlike
 * {@link DeviceNameCompleter}, which offers only devices that are up as services).
 */
@Service
public class MappedDeviceCompleter implements Completer {
    @Reference(optional = true)
    RnbdClientAdmin admin;

    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        List<String> names = admin == null ? List.of() : admin.devices().stream().map(DeviceInfo::name).toList();
        return new StringsCompleter(names).complete(session, commandLine, candidates);
    }
}

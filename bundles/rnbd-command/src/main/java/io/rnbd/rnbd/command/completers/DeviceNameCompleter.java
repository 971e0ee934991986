package io.rnbd.rnbd.command.completers;

import io.rnbd.rnbd.command.DeviceLookup;
import java.util.List;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.support.completers.StringsCompleter;
import org.osgi.framework.BundleContext;

/** Completes the names of mapped devices ({@code rnbd.device} of the RemoteBlockDevice services). */
@Service
public class DeviceNameCompleter implements Completer {
    @Reference
    BundleContext bundleContext;

    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        return new StringsCompleter(DeviceLookup.names(bundleContext)).complete(session, commandLine, candidates);
    }
}

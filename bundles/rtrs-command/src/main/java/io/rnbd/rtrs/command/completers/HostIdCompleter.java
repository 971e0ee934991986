package io.rnbd.rtrs.command.completers;

import io.rnbd.rtrs.command.AuthKeyStore;
import io.rnbd.rtrs.command.AuthKeyStores;
import java.util.List;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.support.completers.StringsCompleter;
import org.osgi.framework.BundleContext;

/** Completes the host ids that have CHAP keys (nothing while the chap bundle is absent). */
@Service
public class HostIdCompleter implements Completer {
    @Reference
    BundleContext bundleContext;

    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        return new StringsCompleter(hostIds()).complete(session, commandLine, candidates);
    }

    List<String> hostIds() {
        try (AuthKeyStores.Held held = AuthKeyStores.open(bundleContext, null)) {
            return held.store().list().stream().map(AuthKeyStore.KeyInfo::hostId).toList();
        } catch (IllegalStateException e) {
            return List.of();
        }
    }
}

package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.rtrs.command.completers.HostIdCompleter;
import java.io.IOException;
import java.io.PrintStream;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.osgi.framework.BundleContext;

/** {@code rtrs:auth-key-remove HOSTID}: new connections of that host are refused (ENOKEY). */
@Service
@Command(scope = "rtrs", name = "auth-key-remove",
        description = "Remove the CHAP keys of a host id (established sessions keep running)")
public class AuthKeyRemoveCommand extends ConsoleCommand {
    @Reference
    BundleContext bundleContext;

    /** Set by tests instead of looking the chap service up. */
    AuthKeyStore store;

    @Argument(index = 0, name = "hostid", description = "Host id whose keys to remove", required = true)
    @Completion(HostIdCompleter.class)
    String hostId;

    @Override
    protected void run(PrintStream out) throws IOException {
        try (AuthKeyStores.Held held = AuthKeyStores.open(bundleContext, store)) {
            if (!held.store().remove(hostId)) {
                throw new IllegalArgumentException("no keys for host '" + hostId + "' in the keys file");
            }
        }
        out.println("keys of host " + hostId + " removed");
    }
}

package io.rnbd.rtrs.auth.chap.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.rtrs.auth.chap.api.ChapKeyAdmin;
import io.rnbd.rtrs.auth.chap.command.completers.HostIdCompleter;
import java.io.IOException;
import java.io.PrintStream;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rtrs:auth-key-remove HOSTID}: new connections of that host are refused (ENOKEY). */
@Service
@Command(scope = "rtrs", name = "auth-key-remove",
        description = "Remove the CHAP keys of a host id (established sessions keep running)")
public class AuthKeyRemoveCommand extends ConsoleCommand {
    @Reference(optional = true)
    ChapKeyAdmin admin;

    @Argument(index = 0, name = "hostid", description = "Host id whose keys to remove", required = true)
    @Completion(HostIdCompleter.class)
    String hostId;

    @Override
    protected void run(PrintStream out) throws IOException {
        if (!ChapKeys.require(admin).remove(hostId)) {
            throw new IllegalArgumentException("no keys for host '" + hostId + "' in the keys file");
        }
        out.println("keys of host " + hostId + " removed");
    }
}

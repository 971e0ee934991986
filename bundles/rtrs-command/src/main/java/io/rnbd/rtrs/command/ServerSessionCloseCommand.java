package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.rtrs.api.RtrsServerSessionInfo;
import io.rnbd.rtrs.command.completers.ServerSessionNameCompleter;
import java.io.PrintStream;
import java.util.stream.Collectors;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rtrs:server-session-close NAME}: disconnect every path of a client's session, server side. */
@Service
@Command(scope = "rtrs", name = "server-session-close",
        description = "Force-close a session on the RTRS server: every path of it is disconnected")
public class ServerSessionCloseCommand extends ConsoleCommand {
    @Reference(optional = true)
    RtrsServerAdmin admin;

    @Argument(index = 0, name = "name", description = "Server session name", required = true)
    @Completion(ServerSessionNameCompleter.class)
    String name;

    @Override
    protected void run(PrintStream out) {
        if (!ServerSessions.require(admin).closeSession(name)) {
            String known = admin.sessions().stream().map(RtrsServerSessionInfo::name).collect(Collectors.joining(", "));
            throw new IllegalArgumentException("no server session '" + name + "'"
                    + (known.isEmpty() ? " (there is no session)" : " (sessions: " + known + ")"));
        }
        out.println("server session " + name + " closed");
    }
}

package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Json;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.command.completers.SessionNameCompleter;
import java.io.PrintStream;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rtrs:max-reconnect-attempts SESSION [N]}: show or set sysfs max_reconnect_attempts. */
@Service
@Command(scope = "rtrs", name = "max-reconnect-attempts",
        description = "Show or set how often a broken path is reconnected before giving up (-1 = forever)")
public class MaxReconnectAttemptsCommand extends ConsoleCommand {
    static final int MIN = -1;
    static final int MAX = 9999;

    @Reference(optional = true)
    RtrsClientAdmin admin;

    @Argument(index = 0, name = "session", description = "Session name", required = true)
    @Completion(SessionNameCompleter.class)
    String session;

    // a String, so a bad number gets our one-line error rather than the shell's conversion message
    @Argument(index = 1, name = "attempts", description = "-1 (forever) or 0..9999; omit to show")
    String attempts;

    @Option(name = "--json", description = "Print JSON instead of text")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        ClientSessions.session(admin, session);
        if (attempts != null) {
            admin.setMaxReconnectAttempts(session, parse(attempts));
        }
        RtrsClientSessionInfo s = ClientSessions.session(admin, session);
        if (json) {
            out.println(Json.write(Json.obj("session", s.name(), "max_reconnect_attempts", s.maxReconnectAttempts())));
        } else {
            int n = s.maxReconnectAttempts();
            out.println(s.name() + ": " + n + (n < 0 ? " (forever)" : ""));
        }
    }

    static int parse(String text) {
        try {
            int n = Integer.parseInt(text.trim());
            if (n >= MIN && n <= MAX) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below with the accepted range
        }
        throw new IllegalArgumentException("max reconnect attempts must be -1 (forever) or 0.." + MAX
                + ", not '" + text + "'");
    }
}

package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Json;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.rtrs.command.completers.AuthMethodCompleter;
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
 * {@code rtrs:auth-method [client|server] [METHOD|default]}: the authenticator new paths use, on
 * the client and on the server; with a method, sets it by the name a registered authenticator
 * announces ({@code rtrs:authenticators}), a bundle of your own too, or {@code default} (the
 * best-ranked one present): {@link RtrsClientAdmin#setAuthMethod},
 * {@link RtrsServerAdmin#setAuthMethod}, which keep it in the end's configuration.
 * Established paths keep running either way.
 */
@Service
@Command(scope = "rtrs", name = "auth-method", description = "Show or set the authenticator new RTRS paths use")
public class AuthMethodCommand extends ConsoleCommand {
    @Reference(optional = true)
    RtrsClientAdmin admin;

    @Reference(optional = true)
    RtrsServerAdmin server;

    @Argument(index = 0, name = "end", description = "client or server; omit to show both")
    @Completion(value = StringsCompleter.class, values = {"client", "server"})
    String end;

    @Argument(index = 1, name = "method", description = "A registered authenticator's name (rtrs:authenticators), or "
            + "'default' for the best-ranked one present; omit to show")
    @Completion(AuthMethodCompleter.class)
    String method;

    @Option(name = "--json", description = "Print JSON instead of text")
    boolean json;

    @Override
    protected void run(PrintStream out) throws IOException {
        if (end != null && !end.equals("client") && !end.equals("server")) {
            throw new IllegalArgumentException("end must be client or server, not '" + end + "'");
        }
        if (method != null) {
            set(out);
            return;
        }
        String client = ClientSessions.require(admin).authMethod();
        String srv = server == null ? null : server.authMethod();
        if (json) {
            out.println(Json.write(end == null ? Json.obj("client", client, "server", srv)
                    : Json.obj(end, end.equals("client") ? client : srv)));
            return;
        }
        if (end == null || end.equals("client")) {
            out.println("client: " + shown(client));
        }
        if (end == null || end.equals("server")) {
            out.println("server: " + (srv == null ? "not running (bundle rtrs-server)" : shown(srv)));
        }
    }

    private static String shown(String method) {
        return method.isEmpty() ? "none (no authenticator present: paths are not authenticated)" : method;
    }

    /** The end's admin service owns the operation (check, configuration): this only says which end. */
    private void set(PrintStream out) throws IOException {
        if (end == null) {
            throw new IllegalArgumentException("say which end: rtrs:auth-method client|server " + method);
        }
        out.println(end.equals("client") ? ClientSessions.require(admin).setAuthMethod(method)
                : ServerSessions.require(server).setAuthMethod(method));
    }
}

package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Json;
import io.rnbd.command.support.Providers;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.rtrs.command.completers.AuthMethodCompleter;
import java.io.IOException;
import java.io.PrintStream;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
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
 * {@code rtrs:auth-method [client|server] [METHOD|default]}: the authenticator new paths use, on
 * the client and on the server; with a method, sets it ({@code auth.method} in the end's
 * configuration, so it stays) by the name a registered authenticator announces
 * ({@code rtrs:authenticators}), a bundle of your own too; {@code default} clears it (the
 * best-ranked one present). Established paths keep running either way.
 */
@Service
@Command(scope = "rtrs", name = "auth-method", description = "Show or set the authenticator new RTRS paths use")
public class AuthMethodCommand extends ConsoleCommand {
    static final String CLIENT_PID = "io.rnbd.rtrs.client";
    static final String SERVER_PID = "io.rnbd.rtrs.server";
    static final String DEFAULT = "default";

    @Reference(optional = true)
    RtrsClientAdmin admin;

    @Reference(optional = true)
    RtrsServerAdmin server;

    @Reference(optional = true)
    ConfigurationAdmin configAdmin;

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

    private void set(PrintStream out) throws IOException {
        if (end == null) {
            throw new IllegalArgumentException("say which end: rtrs:auth-method client|server " + method);
        }
        List<String> known = Providers.names(ClientSessions.require(admin).authenticators());
        if (!method.equals(DEFAULT) && !known.contains(method)) {
            throw new IllegalArgumentException("unknown authenticator '" + method + "' ("
                    + (known.isEmpty() ? "none registered" : "registered: " + String.join(", ", known))
                    + "; or default)");
        }
        if (configAdmin == null) {
            throw new IllegalStateException("ConfigAdmin is not running");
        }
        Configuration c = configAdmin.getConfiguration(end.equals("client") ? CLIENT_PID : SERVER_PID, "?");
        Dictionary<String, Object> props = c.getProperties() == null ? new Hashtable<>() : c.getProperties();
        if (method.equals(DEFAULT)) {
            props.remove("auth.method");
        } else {
            props.put("auth.method", method);
        }
        c.update(props);
        String what = method.equals(DEFAULT) ? "the best-ranked authenticator present" : method;
        if (end.equals("client")) {
            out.println("client: new paths authenticate with " + what);
        } else {
            // the server takes its settings at start: a swap of rtrs-server, which IO waits out
            out.println("server: new paths must pass " + what + "; the RTRS server restarts to apply it, its "
                    + "sessions' paths reconnect and their IO waits meanwhile");
        }
    }
}

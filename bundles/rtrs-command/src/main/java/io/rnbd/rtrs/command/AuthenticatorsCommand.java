package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Listing;
import io.rnbd.command.support.Providers;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.telemetry.api.Telemetry;
import java.io.PrintStream;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/**
 * {@code rtrs:authenticators}: the authenticator services registered now, by the name each
 * announces ({@code rtrs.auth}: what {@code auth.method} takes), with the bundle that registered
 * it and which end authenticates new paths with it (the client, the server).
 */
@Service
@Command(scope = "rtrs", name = "authenticators", description = "List the authenticators registered, with their bundles")
public class AuthenticatorsCommand extends ConsoleCommand {
    @Reference(optional = true)
    RtrsClientAdmin admin;

    @Reference(optional = true)
    Telemetry telemetry;

    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        ClientSessions.require(admin);
        Providers.print(out, json, Listing.read(telemetry, "rtrs_authenticator"), "USED BY",
                "used_by", "no authenticator registered: new paths are not authenticated");
    }
}

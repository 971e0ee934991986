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
 * {@code rtrs:mp-policies}: the multipath policy services registered now, by the name each
 * announces ({@code rtrs.mp.policy}), with the bundle that registered it and the sessions using
 * it: what {@code rtrs:mp-policy} and {@code mp.policy} take.
 */
@Service
@Command(scope = "rtrs", name = "mp-policies", description = "List the multipath policies registered, with their bundles")
public class MpPoliciesCommand extends ConsoleCommand {
    @Reference(optional = true)
    RtrsClientAdmin admin;

    @Reference(optional = true)
    Telemetry telemetry;

    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        ClientSessions.require(admin);
        Providers.print(out, json, Listing.read(telemetry, "rtrs_mp_policy"), "SESSIONS", "sessions",
                "no multipath policy registered: sessions use the built-in round-robin");
    }
}

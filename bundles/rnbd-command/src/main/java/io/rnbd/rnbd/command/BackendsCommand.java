package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Listing;
import io.rnbd.command.support.Providers;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.telemetry.api.Telemetry;
import java.io.PrintStream;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/**
 * {@code rnbd:backends}: the block backend services registered now, by the name each announces
 * ({@code rnbd.backend}: what an export's {@code backend} and {@code rnbd:export-add --backend}
 * take), with the bundle that registered it and the exports it serves.
 */
@Service
@Command(scope = "rnbd", name = "backends", description = "List the block backends registered, with their bundles")
public class BackendsCommand extends ConsoleCommand {
    @Reference(optional = true)
    RnbdServerAdmin admin;

    @Reference(optional = true)
    Telemetry telemetry;

    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        Exports.require(admin);
        Providers.print(out, json, Listing.read(telemetry, "rnbd_backend"), "EXPORTS", "exports",
                "no block backend registered: exports stay offline until one is");
    }
}

package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Json;
import io.rnbd.command.support.TextTable;
import java.io.PrintStream;
import java.util.List;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.osgi.framework.BundleContext;

/** {@code rtrs:auth-keys}: the hosts with CHAP keys; the secrets themselves are never shown. */
@Service
@Command(scope = "rtrs", name = "auth-keys", description = "List the host ids with CHAP keys (never the secrets)")
public class AuthKeysCommand extends ConsoleCommand {
    @Reference
    BundleContext bundleContext;

    /** Set by tests instead of looking the chap service up. */
    AuthKeyStore store;

    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        List<AuthKeyStore.KeyInfo> keys;
        try (AuthKeyStores.Held held = AuthKeyStores.open(bundleContext, store)) {
            keys = held.store().list();
        }
        if (json) {
            out.println(Json.write(keys.stream().map(k -> Json.obj("host_id", k.hostId(), "transform", k.transform(),
                    "key_length", k.keyLength(), "ctrl_key", k.hasCtrlKey(), "source", k.source())).toList()));
            return;
        }
        TextTable t = new TextTable("HOST ID", "TRANSFORM", "KEY BYTES", "CTRL KEY", "SOURCE");
        for (AuthKeyStore.KeyInfo k : keys) {
            t.row(k.hostId(), k.transform(), k.keyLength(), k.hasCtrlKey() ? "yes" : "no", k.source());
        }
        t.print(out);
    }
}

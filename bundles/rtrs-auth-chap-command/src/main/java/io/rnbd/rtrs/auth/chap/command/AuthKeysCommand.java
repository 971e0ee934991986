package io.rnbd.rtrs.auth.chap.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Json;
import io.rnbd.rtrs.auth.chap.api.ChapKeyAdmin;
import io.rnbd.rtrs.auth.chap.api.ChapKeyInfo;
import java.io.PrintStream;
import java.util.List;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.table.ShellTable;

/** {@code rtrs:auth-keys}: the hosts with CHAP keys; the secrets themselves are never shown. */
@Service
@Command(scope = "rtrs", name = "auth-keys", description = "List the host ids with CHAP keys (never the secrets)")
public class AuthKeysCommand extends ConsoleCommand {
    @Reference(optional = true)
    ChapKeyAdmin admin;

    @Option(name = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Override
    protected void run(PrintStream out) {
        List<ChapKeyInfo> keys = ChapKeys.require(admin).list();
        if (json) {
            out.println(Json.write(keys.stream().map(k -> Json.obj("host_id", k.hostId(), "transform", k.transform(),
                    "key_length", k.keyLength(), "ctrl_key", k.hasCtrlKey(), "source", k.source())).toList()));
            return;
        }
        // not a telemetry table: key metadata is the CHAP bundle's own, for the console only
        ShellTable t = new ShellTable();
        for (String header : new String[] {"HOST ID", "TRANSFORM", "KEY BYTES", "CTRL KEY", "SOURCE"}) {
            t.column(header);
        }
        for (ChapKeyInfo k : keys) {
            t.addRow().addContent(k.hostId(), k.transform(), k.keyLength(), k.hasCtrlKey() ? "yes" : "no", k.source());
        }
        t.print(out);
    }
}

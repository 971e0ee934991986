package io.rnbd.command.support;

import io.rnbd.common.Provider;
import io.rnbd.telemetry.api.Table;
import java.io.PrintStream;
import java.util.List;

/**
 * The hot-swappable services of one kind as the console lists them ({@code rtrs:mp-policies},
 * {@code rtrs:authenticators}, {@code rnbd:backends}): the telemetry tables {@code rtrs_mp_policy},
 * {@code rtrs_authenticator}, {@code rnbd_backend}, so the same columns and {@code --json} keys for
 * the three and for JMX, /metrics and the dashboard.
 */
public final class Providers {
    private Providers() {
    }

    /**
     * @param usedHeader what the last column is called in the table ({@code SESSIONS} ...)
     * @param usedKey    its column key ({@code sessions} ...)
     * @param none       what to print instead of an empty table
     */
    public static void print(PrintStream out, boolean json, Table providers, String usedHeader, String usedKey,
            String none) {
        Listing l = Listing.of(providers).column("NAME", "name").column("BUNDLE", "bundle")
                .column("VERSION", "version").column("ID", "bundle_id").column("RANKING", "ranking")
                .column(usedHeader, usedKey);
        if (!json && l.isEmpty()) {
            out.println(none);
            return;
        }
        l.print(out, json);
    }

    /** The names, in order and once each: what a completer offers. */
    public static List<String> names(List<Provider> providers) {
        return providers.stream().map(Provider::name).distinct().toList();
    }
}

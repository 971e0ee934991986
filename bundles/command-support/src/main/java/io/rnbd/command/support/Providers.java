package io.rnbd.command.support;

import io.rnbd.common.Provider;
import java.io.PrintStream;
import java.util.List;

/**
 * The hot-swappable services of one kind as the console lists them ({@code rtrs:mp-policies},
 * {@code rtrs:authenticators}, {@code rnbd:backends}): the name each announces, the bundle that
 * registered it and what uses it now. The same columns and {@code --json} keys for the three, as
 * the telemetry tables {@code rtrs_mp_policy}, {@code rtrs_authenticator}, {@code rnbd_backend} have them.
 */
public final class Providers {
    private Providers() {
    }

    /**
     * @param usedHeader what the last column is called in the table ({@code SESSIONS} ...)
     * @param usedKey    and in {@code --json} ({@code sessions} ...)
     * @param none       what to print instead of an empty table
     */
    public static void print(PrintStream out, boolean json, List<Provider> providers, String usedHeader,
            String usedKey, String none) {
        if (json) {
            out.println(Json.write(providers.stream().map(p -> Json.obj("name", p.name(), "bundle", p.bundle(),
                    "version", p.version(), "bundle_id", p.bundleId(), "ranking", p.ranking(), usedKey, p.usedBy()))
                    .toList()));
            return;
        }
        if (providers.isEmpty()) {
            out.println(none);
            return;
        }
        TextTable t = new TextTable("NAME", "BUNDLE", "VERSION", "ID", "RANKING", usedHeader);
        for (Provider p : providers) {
            t.row(p.name(), p.bundle(), p.version(), p.bundleId(), p.ranking(),
                    p.usedBy().isEmpty() ? "-" : String.join(",", p.usedBy()));
        }
        t.print(out);
    }

    /** The names, in order and once each: what a completer offers. */
    public static List<String> names(List<Provider> providers) {
        return providers.stream().map(Provider::name).distinct().toList();
    }
}

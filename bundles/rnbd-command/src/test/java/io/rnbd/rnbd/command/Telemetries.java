package io.rnbd.rnbd.command;

import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.telemetry.api.Table;
import io.rnbd.telemetry.api.Telemetry;
import io.rnbd.telemetry.internal.Sources;
import io.rnbd.telemetry.internal.TelemetryReader;

/** The telemetry service over the tests' fake admins, as the telemetry bundle builds it. */
final class Telemetries {
    private Telemetries() {
    }

    static Telemetry over(RnbdServerAdmin server, RnbdClientAdmin client) {
        return new TelemetryReader(new Sources(() -> null, () -> null, () -> null, () -> server, () -> client,
                () -> null));
    }

    static Table table(Telemetry t, String name) {
        return t.table(name).orElseThrow();
    }
}

package io.rnbd.rtrs.command;

import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.telemetry.api.Table;
import io.rnbd.telemetry.api.Telemetry;
import io.rnbd.telemetry.internal.Sources;
import io.rnbd.telemetry.internal.TelemetryReader;

/** The telemetry service over the tests' fake admins, as the telemetry bundle builds it. */
final class Telemetries {
    private Telemetries() {
    }

    static Telemetry over(RtrsClientAdmin client, RtrsServerAdmin server) {
        return new TelemetryReader(new Sources(() -> null, () -> client, () -> server, () -> null, () -> null,
                () -> null));
    }

    static Table table(Telemetry t, String name) {
        return t.table(name).orElseThrow();
    }
}

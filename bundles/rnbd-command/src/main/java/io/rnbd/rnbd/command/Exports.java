package io.rnbd.rnbd.command;

import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo;
import java.util.Optional;

final class Exports {
    private Exports() {
    }

    static RnbdServerAdmin require(RnbdServerAdmin admin) {
        if (admin == null) {
            throw new IllegalStateException("the RNBD server is not running (bundle rnbd-server)");
        }
        return admin;
    }

    static Optional<ExportInfo> find(RnbdServerAdmin admin, String name) {
        return admin == null ? Optional.empty()
                : admin.exports().stream().filter(e -> e.name().equals(name)).findFirst();
    }
}

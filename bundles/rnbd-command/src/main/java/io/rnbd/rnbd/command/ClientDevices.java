package io.rnbd.rnbd.command;

import io.rnbd.command.support.Formats;
import io.rnbd.command.support.Json;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceInfo;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/** Lookups and JSON shapes of mapped devices shared by the client-side commands. */
final class ClientDevices {
    private ClientDevices() {
    }

    static RnbdClientAdmin require(RnbdClientAdmin admin) {
        if (admin == null) {
            throw new IllegalStateException("the RNBD client is not running (bundle rnbd-client)");
        }
        return admin;
    }

    static Optional<DeviceInfo> find(RnbdClientAdmin admin, String device) {
        return admin.devices().stream().filter(d -> d.name().equals(device)).findFirst();
    }

    static DeviceInfo device(RnbdClientAdmin admin, String device) {
        return find(require(admin), device).orElseThrow(() -> new IllegalArgumentException(
                "no mapped device '" + device + "'" + known(admin)));
    }

    private static String known(RnbdClientAdmin admin) {
        String names = admin.devices().stream().map(DeviceInfo::name).collect(Collectors.joining(", "));
        return names.isEmpty() ? " (no device is mapped)" : " (devices: " + names + ")";
    }

    /** "mapped, 1.0 GiB" or "failed: ENOENT (2)": a device's state in a few words. */
    static String describe(DeviceInfo d) {
        StringBuilder sb = new StringBuilder(Formats.lower(d.state()));
        if (d.size() > 0) {
            sb.append(", ").append(Formats.bytes(d.size()));
        }
        if (d.lastError() != 0) {
            sb.append(", last error ").append(Formats.errno(d.lastError()));
        }
        return sb.toString();
    }

    /** "b since 12:00:03 (generation 4, 2 takeovers, last stall 131 ms, longest 402 ms)", "-" over one server. */
    static String active(DeviceInfo d) {
        if (d.ha().sessions().isEmpty()) {
            return "-";
        }
        if (d.ha().active().isEmpty()) {
            return "none";
        }
        long n = d.ha().takeovers();
        return d.ha().active() + " since " + Formats.time(d.ha().activeSince()) + " (generation " + d.ha().generation()
                + ", " + n + " takeover" + (n == 1 ? "" : "s")
                + (n > 0 ? ", last stall " + d.ha().lastStallMs() + " ms, longest " + d.ha().maxStallMs() + " ms" : "")
                + ")";
    }

    static Map<String, Object> json(DeviceInfo d) {
        return Json.obj("name", d.name(), "session", d.session(), "export", d.export(), "access_mode", d.mode(),
                "size", d.size(), "state", d.state(), "users", d.users(), "stats", Stats.json(d.stats()),
                "last_error", d.lastError(), "ha", Json.obj("sessions", d.ha().sessions(), "active", d.ha().active(),
                        "active_since", d.ha().activeSince(), "generation", d.ha().generation(),
                        "takeovers", d.ha().takeovers(), "last_stall_ms", d.ha().lastStallMs(),
                        "max_stall_ms", d.ha().maxStallMs()));
    }
}

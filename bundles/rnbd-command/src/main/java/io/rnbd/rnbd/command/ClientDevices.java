package io.rnbd.rnbd.command;

import io.rnbd.command.support.Formats;
import io.rnbd.command.support.Listing;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceInfo;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/** Lookups and descriptions of mapped devices shared by the client-side commands. */
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
        return active(d.ha().sessions(), d.ha().active(), d.ha().activeSince(), d.ha().generation(), d.ha().takeovers(),
                d.ha().lastStallMs(), d.ha().maxStallMs());
    }

    /** The same, of a row of telemetry's rnbd_device (rnbd:devices). */
    static String active(Listing.Row r) {
        return active(r.list("sessions"), r.text("active_session"), r.number("active_since_ms"), r.number("generation"),
                r.number("takeovers"), r.number("last_stall_ms"), r.number("max_stall_ms"));
    }

    private static String active(List<String> sessions, String active, long since, long generation, long n,
            long lastStall, long maxStall) {
        if (sessions.isEmpty()) {
            return "-";
        }
        if (active.isEmpty()) {
            return "none";
        }
        return active + " since " + Formats.time(since) + " (generation " + generation
                + ", " + n + " takeover" + (n == 1 ? "" : "s")
                + (n > 0 ? ", last stall " + lastStall + " ms, longest " + maxStall + " ms" : "")
                + ")";
    }
}

package io.rnbd.rtrs.command;

import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import java.util.List;
import java.util.stream.Collectors;

/** Lookups of client sessions shared by the client-side commands (their listings are telemetry's). */
final class ClientSessions {
    private ClientSessions() {
    }

    static RtrsClientAdmin require(RtrsClientAdmin admin) {
        if (admin == null) {
            throw new IllegalStateException("the RTRS client is not running (bundle rtrs-client)");
        }
        return admin;
    }

    /** The named session, or a one-line error naming the sessions there are. */
    static RtrsClientSessionInfo session(RtrsClientAdmin admin, String name) {
        return require(admin).session(name).orElseThrow(() -> new IllegalArgumentException(
                "no session '" + name + "'" + known(admin)));
    }

    static List<RtrsClientSessionInfo> sessions(RtrsClientAdmin admin, String nameOrNull) {
        return nameOrNull == null ? require(admin).sessions() : List.of(session(admin, nameOrNull));
    }

    private static String known(RtrsClientAdmin admin) {
        List<RtrsClientSessionInfo> all = admin.sessions();
        return all.isEmpty() ? " (there is no session)"
                : " (sessions: " + all.stream().map(RtrsClientSessionInfo::name).collect(Collectors.joining(", ")) + ")";
    }

    static long connectedPaths(RtrsClientSessionInfo s) {
        return s.paths().stream().filter(p -> p.state() == PathState.CONNECTED).count();
    }
}

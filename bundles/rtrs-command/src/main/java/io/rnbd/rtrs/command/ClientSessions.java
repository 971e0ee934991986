package io.rnbd.rtrs.command;

import io.rnbd.command.support.Json;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.api.RtrsPathStats;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Lookups and JSON shapes of client sessions shared by the client-side commands. */
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

    static Map<String, Object> json(RtrsClientSessionInfo s) {
        return Json.obj("name", s.name(), "state", s.state(), "last_error", s.lastError(),
                "queue_depth", s.queueDepth(), "mp_policy", s.mpPolicy(), "active_mp_policy", s.activePolicy(),
                "max_reconnect_attempts", s.maxReconnectAttempts(),
                "paths", s.paths().stream().map(ClientSessions::json).toList());
    }

    static Map<String, Object> json(RtrsClientPathInfo p) {
        return Json.obj("name", p.name(), "src_addr", p.srcAddress(), "dst_addr", p.dstAddress(),
                "state", p.state(), "hca_name", p.device(), "reconnect_attempts", p.reconnectAttempts(),
                "last_error", p.lastError(), "stats", json(p.stats()));
    }

    static Map<String, Object> json(RtrsPathStats st) {
        if (st == null) {
            return null;
        }
        var io = st.io();
        return Json.obj("reads", io.reads(), "read_bytes", io.readBytes(), "writes", io.writes(),
                "write_bytes", io.writeBytes(), "inflight", io.inflight(), "failovers", st.failovers(),
                "reconnects_ok", st.reconnectsOk(), "reconnects_failed", st.reconnectsFailed(),
                "hb_rtt_ns", st.heartbeatRttNanos(), "io_latency_ns", st.ioLatencyNanos());
    }
}

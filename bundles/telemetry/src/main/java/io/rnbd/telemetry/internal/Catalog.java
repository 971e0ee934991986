package io.rnbd.telemetry.internal;

import static io.rnbd.telemetry.api.Column.counter;
import static io.rnbd.telemetry.api.Column.counters;
import static io.rnbd.telemetry.api.Column.flag;
import static io.rnbd.telemetry.api.Column.gauge;
import static io.rnbd.telemetry.api.Column.histogram;
import static io.rnbd.telemetry.api.Column.id;
import static io.rnbd.telemetry.api.Column.list;
import static io.rnbd.telemetry.api.Column.nanos;
import static io.rnbd.telemetry.api.Column.state;
import static io.rnbd.telemetry.api.Column.text;

import io.rnbd.common.LatencyHistogram;
import io.rnbd.common.Provider;
import io.rnbd.rdma.api.LinkState;
import io.rnbd.rnbd.api.BlockIoStats;
import io.rnbd.nbd.gateway.api.NbdGatewayAdmin;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rtrs.api.Authenticators;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.api.RtrsIoStats;
import io.rnbd.rtrs.api.RtrsPathStats;
import io.rnbd.rtrs.api.RtrsServerPathInfo;
import io.rnbd.rtrs.api.RtrsServerSessionInfo;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.telemetry.api.Column;
import io.rnbd.telemetry.api.TableSchema;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The tables and how each is read from the admin services' DTOs. This is the one place
 * that maps a DTO field to a column, for every reader: the console's listings (command-support's
 * Listing prints these rows, {@code --json} under {@link Column#console()}, dotted keys nested),
 * JMX, /metrics and the dashboard.
 */
final class Catalog {
    private Catalog() {
    }

    // ---- the IO counters that several tables share -------------------------------------------

    private static final String READS = "Reads completed";
    private static final String READ_BYTES = "Bytes read";
    private static final String WRITES = "Writes completed";
    private static final String WRITE_BYTES = "Bytes written";
    private static final String INFLIGHT = "Requests in flight now";

    private static List<Column> ioColumns() {
        return List.of(
                counter("reads", "stats.reads", "reads", READS),
                counter("read_bytes", "stats.read_bytes", "read_bytes", READ_BYTES),
                counter("writes", "stats.writes", "writes", WRITES),
                counter("write_bytes", "stats.write_bytes", "write_bytes", WRITE_BYTES),
                gauge("inflight", "stats.inflight", "inflight", INFLIGHT));
    }

    private static List<Column> blockColumns(String latencyHelp) {
        List<Column> c = new ArrayList<>(ioColumns());
        c.add(4, counter("errors", "stats.errors", "errors", "Requests that failed"));
        c.add(5, counter("timeouts", "stats.timeouts", "timeouts",
                "Requests the backend held beyond backend.timeout.ms (exports; answered when the backend gives them back)"));
        c.add(6, counter("unknown", "stats.unknown", "unknown",
                "Messages with what this side does not know, handled as Linux does: on an export, requests with "
                        + "unknown flag bits (ignored) or ops (EOPNOTSUPP); on a device, OPEN answers with unknown "
                        + "cache_policy bits (ignored)"));
        c.add(histogram("latency", "io_latency", latencyHelp));
        return c;
    }

    @SafeVarargs
    private static List<Column> columns(List<Column>... parts) {
        List<Column> all = new ArrayList<>();
        for (List<Column> p : parts) {
            all.addAll(p);
        }
        return all;
    }

    // ---- schemas --------------------------------------------------------------------------------

    static final TableSchema RDMA_DEVICE = new TableSchema("rdma_device",
            "RDMA devices the registry tracks (rdma:devices, rdma:statistic)", List.of(
            id("device", "name", "Device name"),
            text("provider", "provider", "Provider that registered the device (soft, disni)"),
            text("node_id", "node_id", "Node GUID"),
            state("state", "state", "Port state", LinkState.class),
            list("addresses", "addresses", "IP addresses the device serves"),
            list("clients", "clients", "IB clients the device has been added to"),
            counters("counters", "counters", "counter", "The provider's own counters, by name")));

    static final TableSchema RTRS_CLIENT_SESSION = new TableSchema("rtrs_client_session",
            "RTRS client sessions (rtrs:sessions, rtrs:mp-policy, rtrs:max-reconnect-attempts)", List.of(
            id("session", "name", "Session name"),
            state("state", "state", "Session state", SessionState.class),
            gauge("last_error", "last_error", "last_error", "Errno of the last failure, 0 if none"),
            gauge("queue_depth", "queue_depth", "queue_depth", "Requests the session may have in flight"),
            text("mp_policy", "mp_policy", "Configured multipath policy"),
            text("active_mp_policy", "active_mp_policy", "Multipath policy in use now"),
            gauge("max_reconnect_attempts", "max_reconnect_attempts", "max_reconnect_attempts",
                    "Reconnect attempts before a path is given up (-1 = forever)")));

    static final TableSchema RTRS_CLIENT_PATH = new TableSchema("rtrs_client_path",
            "Paths of RTRS client sessions (rtrs:paths, rtrs:stats, paths of rtrs:sessions)", columns(List.of(
            id("session", "session", "Session name"),
            id("path", "name", "Path name, src@dst as added"),
            text("src_addr", "src_addr", "Source address"),
            text("dst_addr", "dst_addr", "Destination address and port"),
            state("state", "state", "Path state (the kernel's rtrs_clt_state)", PathState.class),
            text("hca_name", "hca_name", "Local RDMA device in use (empty while none)"),
            gauge("reconnect_attempts", "reconnect_attempts", "reconnect_attempts",
                    "Failed reconnect attempts since the path was last connected"),
            gauge("last_error", "last_error", "last_error", "Errno of the last failure, 0 if none")),
            ioColumns(), List.of(
            counter("failovers", "stats.failovers", "failovers", "Requests failed over away from this path"),
            counter("reconnects_ok", "stats.reconnects_ok", "reconnects_ok", "Successful reconnects"),
            counter("reconnects_failed", "stats.reconnects_failed", "reconnects_failed", "Failed reconnects"),
            counter("request_timeouts", "stats.request_timeouts", "request_timeouts",
                    "Requests unanswered within request.timeout.ms; each one failed the path"),
            nanos("hb_rtt_ns", "stats.hb_rtt_ns", "heartbeat_rtt", "Last heartbeat round trip"),
            nanos("io_latency_ns", "stats.io_latency_ns", "io_latency_smoothed",
                    "Smoothed IO latency, as the min-latency policy sees it"),
            histogram("io_latency", "io_latency", "IO latency from post to response, per path"))));

    static final TableSchema RTRS_SERVER_SESSION = new TableSchema("rtrs_server_session",
            "Sessions clients hold on this RTRS server (rtrs:server-sessions)", columns(List.of(
            id("session", "name", "Session name"),
            text("host_id", "host_id", "Authenticated host id of the client"),
            text("uuid", "uuid", "Session uuid"),
            gauge("queue_depth", "queue_depth", "queue_depth", "Chunks (requests in flight) of the session"),
            gauge("chunk_size", "chunk_size", "chunk_size_bytes", "Bytes per chunk")),
            ioColumns()));

    static final TableSchema RTRS_SERVER_PATH = new TableSchema("rtrs_server_path",
            "Paths of sessions on this RTRS server (rtrs:server-sessions --paths)", List.of(
            id("session", "session", "Session name"),
            id("path", "uuid", "Path uuid"),
            text("hca_name", "hca_name", "Local RDMA device"),
            text("local_addr", "local_addr", "Local address"),
            text("remote_addr", "remote_addr", "Remote address"),
            gauge("connections", "connections", "connections", "Connections of the path"),
            gauge("inflight", "inflight", "inflight", INFLIGHT)));

    static final TableSchema RNBD_EXPORT = new TableSchema("rnbd_export",
            "Exports of the RNBD server (rnbd:exports)", columns(List.of(
            id("export", "name", "Export name"),
            text("backend", "backend", "Backend (memory, file ...)"),
            gauge("size", "size", "size_bytes", "Size in bytes (0 while offline and never opened)"),
            state("state", "state", "Export state", RnbdServerAdmin.ExportState.class),
            flag("read_only", "read_only", "read_only", "1 if read-only"),
            text("last_error", "last_error", "Why the export is offline, empty if it is not"),
            state("role", "ha.role", "This server's part in an export several servers serve (ha = true): NONE for an "
                    + "export of its own", RnbdServerAdmin.Role.class),
            text("active_server", "ha.active_server", "The server the storage records as holding it (ha)"),
            gauge("active_since_ms", "ha.active_since", "active_since_ms",
                    "When the active server took the storage, ms since the epoch by its clock (ha; 0 unknown)"),
            gauge("generation", "ha.generation", "generation", "How often a server took the storage, the active one's "
                    + "take included (ha)"),
            counter("takeovers", "ha.takeovers", "takeovers", "Takeovers this server made for the export: each broke "
                    + "and fenced another holder (ha)"),
            gauge("last_takeover_ms", "ha.last_takeover_ms", "last_takeover_ms",
                    "How long this server's last take of the storage took, request to lock held (ha)")),
            blockColumns("IO latency of the backend, per export")));

    static final TableSchema RNBD_EXPORT_OPENER = new TableSchema("rnbd_export_opener",
            "Sessions that have an export open (openers of rnbd:exports)", List.of(
            id("export", "export", "Export name"),
            id("session", "session", "Session holding it open"),
            text("access_mode", "access_mode", "How it is open (RO, RW, MIGRATION)"),
            gauge("device_id", "device_id", "device_id", "Device id the server gave the session")));

    static final TableSchema RNBD_DEVICE = new TableSchema("rnbd_device",
            "Devices the RNBD client mapped (rnbd:devices)", columns(List.of(
            id("device", "name", "Device name"),
            text("session", "session", "RTRS session it is mapped over"),
            text("export", "export", "Export name on the server"),
            text("access_mode", "access_mode", "Access mode (RO, RW, MIGRATION)"),
            gauge("size", "size", "size_bytes", "Size in bytes as last reported by the server"),
            state("state", "state", "Mapping state", RnbdClientAdmin.DeviceState.class),
            gauge("users", "users", "users", "Holders of the device (NBD connections, rnbd:bench)"),
            gauge("last_error", "last_error", "last_error", "Errno of the last failed OPEN, 0 if none"),
            list("sessions", "ha.sessions", "Sessions of a device over several servers, in order of preference; "
                    + "empty for a device over one"),
            text("active_session", "ha.active", "The session IO goes to now, of a device over several servers"),
            gauge("active_since_ms", "ha.active_since", "active_since_ms",
                    "When IO went there, ms since the epoch by this client's clock (several servers)"),
            gauge("generation", "ha.generation", "generation", "The generation of the active server's take of the "
                    + "storage (several servers)"),
            counter("takeovers", "ha.takeovers", "takeovers", "Times IO moved to another server (several servers)"),
            gauge("last_stall_ms", "ha.last_stall_ms", "last_stall_ms", "How long IO waited in the last move, from "
                    + "the old server's loss to the new one's answer (several servers)"),
            gauge("max_stall_ms", "ha.max_stall_ms", "max_stall_ms", "The longest such wait since the mapping was made")),
            blockColumns("IO latency from submission to completion, per mapped device")));

    static final TableSchema NBD_GATEWAY = new TableSchema("nbd_gateway",
            "The NBD gateway serving mapped devices to NBD clients", List.of(
            text("address", "", "TCP address listened on"),
            text("unix_socket", "", "Unix socket listened on"),
            list("exports", "", "Devices served"),
            gauge("connections_open", "", "connections_open", "NBD connections open now"),
            counter("connections", "", "connections", "NBD connections accepted"),
            counter("refused", "", "refused_connections", "Connections refused: too many open"),
            counter("handshake_timeouts", "", "handshake_timeouts", "Connections closed: handshake too slow"),
            counter("dropped", "", "dropped_connections", "Connections closed on a protocol or socket error"),
            counter("requests", "", "requests", "Requests read"),
            counter("errors", "", "errors", "Requests answered with an error"),
            counter("read_bytes", "", "read_bytes", "Bytes sent to clients in read replies"),
            counter("write_bytes", "", "write_bytes", "Bytes clients sent in write requests"),
            text("host_tuning", "", "Host settings that hold the gateway back, each with the command that fixes it"
                    + " (empty: none)")));

    /**
     * A hot-swappable service's columns: the name it announces (what settings and commands
     * take), its bundle, and what uses it; as {@code rtrs:mp-policies}, {@code rtrs:authenticators}
     * and {@code rnbd:backends} print them (command-support's Providers).
     */
    private static List<Column> providerColumns(String property, String usedKey, String usedHelp) {
        return List.of(
                id("name", "name", "Name the service announces (" + property + ")"),
                id("bundle", "bundle", "Symbolic name of the bundle that registered it"),
                text("version", "version", "Version of that bundle"),
                gauge("bundle_id", "bundle_id", "bundle_id", "Id of that bundle (what bundle:update takes)"),
                gauge("ranking", "ranking", "ranking", "service.ranking (the best-ranked of a kind is the fallback)"),
                list(usedKey, usedKey, usedHelp));
    }

    static final TableSchema RTRS_MP_POLICY = new TableSchema("rtrs_mp_policy",
            "Multipath policies registered, with their bundles (rtrs:mp-policies)", providerColumns("rtrs.mp.policy",
            "sessions", "Client sessions whose active policy it is"));

    static final TableSchema RTRS_AUTHENTICATOR = new TableSchema("rtrs_authenticator",
            "Authenticators registered, with their bundles (rtrs:authenticators)", providerColumns("rtrs.auth",
            "used_by", "Which end authenticates new paths with it: client, server"));

    static final TableSchema RNBD_BACKEND = new TableSchema("rnbd_backend",
            "Block backends registered, with their bundles (rnbd:backends)", providerColumns("rnbd.backend",
            "exports", "Exports it serves"));

    /** A table and how its rows are read. */
    record Entry(TableSchema schema, Function<Sources, List<List<Object>>> reader) {
    }

    static final List<Entry> ENTRIES = List.of(
            new Entry(RDMA_DEVICE, Catalog::rdmaDevices),
            new Entry(RTRS_CLIENT_SESSION, Catalog::clientSessions),
            new Entry(RTRS_CLIENT_PATH, Catalog::clientPaths),
            new Entry(RTRS_SERVER_SESSION, Catalog::serverSessions),
            new Entry(RTRS_SERVER_PATH, Catalog::serverPaths),
            new Entry(RNBD_EXPORT, Catalog::exports),
            new Entry(RNBD_EXPORT_OPENER, Catalog::openers),
            new Entry(RNBD_DEVICE, Catalog::devices),
            new Entry(NBD_GATEWAY, Catalog::gateway),
            new Entry(RTRS_MP_POLICY, Catalog::mpPolicies),
            new Entry(RTRS_AUTHENTICATOR, Catalog::authenticators),
            new Entry(RNBD_BACKEND, Catalog::backends));

    // ---- readers ------------------------------------------------------------------------------

    static List<List<Object>> rdmaDevices(Sources s) {
        var admin = s.rdma().get();
        if (admin == null) {
            return List.of();
        }
        return admin.devices().stream().map(d -> new RowBuilder(RDMA_DEVICE)
                .set("device", d.name()).set("provider", d.provider()).set("node_id", d.nodeId())
                .set("state", d.linkState().name()).set("addresses", d.addresses()).set("clients", d.clients())
                .set("counters", d.counters()).build()).toList();
    }

    private static List<RtrsClientSessionInfo> clientSessionInfos(Sources s) {
        var admin = s.rtrsClient().get();
        return admin == null ? List.of() : admin.sessions();
    }

    static List<List<Object>> clientSessions(Sources s) {
        return clientSessionInfos(s).stream().map(i -> new RowBuilder(RTRS_CLIENT_SESSION)
                .set("session", i.name()).set("state", i.state().name()).set("last_error", i.lastError())
                .set("queue_depth", i.queueDepth()).set("mp_policy", i.mpPolicy())
                .set("active_mp_policy", i.activePolicy()).set("max_reconnect_attempts", i.maxReconnectAttempts())
                .build()).toList();
    }

    static List<List<Object>> clientPaths(Sources s) {
        List<List<Object>> rows = new ArrayList<>();
        for (RtrsClientSessionInfo i : clientSessionInfos(s)) {
            for (RtrsClientPathInfo p : i.paths()) {
                RtrsPathStats st = p.stats() != null ? p.stats()
                        : new RtrsPathStats(new RtrsIoStats(0, 0, 0, 0, 0), 0, 0, 0, 0, 0);
                RowBuilder b = new RowBuilder(RTRS_CLIENT_PATH).set("session", i.name()).set("path", p.name())
                        .set("src_addr", p.srcAddress()).set("dst_addr", p.dstAddress())
                        .set("state", p.state().name()).set("hca_name", p.device())
                        .set("reconnect_attempts", p.reconnectAttempts()).set("last_error", p.lastError())
                        .set("failovers", st.failovers()).set("reconnects_ok", st.reconnectsOk())
                        .set("reconnects_failed", st.reconnectsFailed()).set("hb_rtt_ns", st.heartbeatRttNanos())
                        .set("request_timeouts", st.requestTimeouts()).set("io_latency_ns", st.ioLatencyNanos())
                        .set("io_latency", st.ioLatencyHistogram());
                rows.add(io(b, st.io()).build());
            }
        }
        return rows;
    }

    private static RowBuilder io(RowBuilder b, RtrsIoStats io) {
        RtrsIoStats st = io != null ? io : new RtrsIoStats(0, 0, 0, 0, 0);
        return b.set("reads", st.reads()).set("read_bytes", st.readBytes()).set("writes", st.writes())
                .set("write_bytes", st.writeBytes()).set("inflight", st.inflight());
    }

    private static RowBuilder block(RowBuilder b, BlockIoStats io) {
        BlockIoStats st = io != null ? io : BlockIoStats.ZERO;
        return b.set("reads", st.reads()).set("read_bytes", st.readBytes()).set("writes", st.writes())
                .set("write_bytes", st.writeBytes()).set("errors", st.errors()).set("timeouts", st.timeouts()).set("unknown", st.unknown())
                .set("inflight", st.inflight()).set("latency", st.latency() != null ? st.latency() : LatencyHistogram.EMPTY);
    }

    private static List<RtrsServerSessionInfo> serverSessionInfos(Sources s) {
        var admin = s.rtrsServer().get();
        return admin == null ? List.of() : admin.sessions();
    }

    static List<List<Object>> serverSessions(Sources s) {
        return serverSessionInfos(s).stream().map(i -> io(new RowBuilder(RTRS_SERVER_SESSION)
                .set("session", i.name()).set("host_id", i.hostId()).set("uuid", String.valueOf(i.uuid()))
                .set("queue_depth", i.queueDepth()).set("chunk_size", i.chunkSize()), i.stats()).build()).toList();
    }

    static List<List<Object>> serverPaths(Sources s) {
        List<List<Object>> rows = new ArrayList<>();
        for (RtrsServerSessionInfo i : serverSessionInfos(s)) {
            for (RtrsServerPathInfo p : i.paths()) {
                rows.add(new RowBuilder(RTRS_SERVER_PATH).set("session", i.name()).set("path", String.valueOf(p.uuid()))
                        .set("hca_name", p.device()).set("local_addr", p.localAddress())
                        .set("remote_addr", p.remoteAddress()).set("connections", p.connections())
                        .set("inflight", p.inflight()).build());
            }
        }
        return rows;
    }

    private static List<RnbdServerAdmin.ExportInfo> exportInfos(Sources s) {
        var admin = s.rnbdServer().get();
        return admin == null ? List.of() : admin.exports();
    }

    static List<List<Object>> exports(Sources s) {
        return exportInfos(s).stream().map(e -> block(new RowBuilder(RNBD_EXPORT)
                .set("export", e.name()).set("backend", e.backend()).set("size", e.size())
                .set("state", e.state().name()).set("read_only", e.readOnly()).set("last_error", e.lastError())
                .set("role", e.ha().role().name()).set("active_server", e.ha().activeServer())
                .set("active_since_ms", e.ha().activeSince()).set("generation", e.ha().generation())
                .set("takeovers", e.ha().takeovers()).set("last_takeover_ms", e.ha().lastTakeoverMs()),
                e.stats()).build()).toList();
    }

    static List<List<Object>> openers(Sources s) {
        List<List<Object>> rows = new ArrayList<>();
        for (RnbdServerAdmin.ExportInfo e : exportInfos(s)) {
            for (RnbdServerAdmin.Opener o : e.openers()) {
                rows.add(new RowBuilder(RNBD_EXPORT_OPENER).set("export", e.name()).set("session", o.session())
                        .set("access_mode", o.mode().name()).set("device_id", o.deviceId()).build());
            }
        }
        return rows;
    }

    static List<List<Object>> devices(Sources s) {
        var admin = s.rnbdClient().get();
        if (admin == null) {
            return List.of();
        }
        return admin.devices().stream().map(d -> block(new RowBuilder(RNBD_DEVICE)
                .set("device", d.name()).set("session", d.session()).set("export", d.export())
                .set("access_mode", d.mode().name()).set("size", d.size()).set("state", d.state().name())
                .set("users", d.users()).set("last_error", d.lastError()).set("sessions", d.ha().sessions())
                .set("active_session", d.ha().active()).set("active_since_ms", d.ha().activeSince())
                .set("generation", d.ha().generation()).set("takeovers", d.ha().takeovers())
                .set("last_stall_ms", d.ha().lastStallMs()).set("max_stall_ms", d.ha().maxStallMs()),
                d.stats()).build()).toList();
    }

    static List<List<Object>> gateway(Sources s) {
        NbdGatewayAdmin admin = s.gateway().get();
        if (admin == null) {
            return List.of();
        }
        NbdGatewayAdmin.GatewayInfo g = admin.info();
        NbdGatewayAdmin.GatewayStats st = g.stats();
        return List.of(new RowBuilder(NBD_GATEWAY).set("address", g.address()).set("unix_socket", g.unixSocket())
                .set("exports", g.exports()).set("connections_open", g.connectionsOpen())
                .set("connections", st.connections()).set("refused", st.refused())
                .set("handshake_timeouts", st.handshakeTimeouts()).set("dropped", st.dropped())
                .set("requests", st.requests()).set("errors", st.errors()).set("read_bytes", st.bytesRead())
                .set("write_bytes", st.bytesWritten()).set("host_tuning", g.hostTuning()).build());
    }

    static List<List<Object>> mpPolicies(Sources s) {
        var admin = s.rtrsClient().get();
        return admin == null ? List.of() : providers(RTRS_MP_POLICY, "sessions", admin.mpPolicies());
    }

    static List<List<Object>> authenticators(Sources s) {
        var admin = s.rtrsClient().get();
        if (admin == null) {
            return List.of();
        }
        var server = s.rtrsServer().get();
        return providers(RTRS_AUTHENTICATOR, "used_by",
                Authenticators.withServer(admin.authenticators(), server == null ? "" : server.authMethod()));
    }

    static List<List<Object>> backends(Sources s) {
        var admin = s.rnbdServer().get();
        return admin == null ? List.of() : providers(RNBD_BACKEND, "exports", admin.backends());
    }

    private static List<List<Object>> providers(TableSchema schema, String usedKey, List<Provider> providers) {
        return providers.stream().map(p -> new RowBuilder(schema).set("name", p.name()).set("bundle", p.bundle())
                .set("version", p.version()).set("bundle_id", p.bundleId()).set("ranking", p.ranking())
                .set(usedKey, p.usedBy()).build()).toList();
    }
}

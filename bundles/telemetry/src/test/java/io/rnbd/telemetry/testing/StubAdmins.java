package io.rnbd.telemetry.testing;

import io.rnbd.common.LatencyHistogram;
import io.rnbd.common.Provider;
import io.rnbd.rdma.api.LinkState;
import io.rnbd.rdma.api.RdmaAdmin;
import io.rnbd.rdma.api.RdmaDeviceInfo;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoStats;
import io.rnbd.nbd.gateway.api.NbdGatewayAdmin;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.api.RtrsIoStats;
import io.rnbd.rtrs.api.RtrsPathStats;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.rtrs.api.RtrsServerPathInfo;
import io.rnbd.rtrs.api.RtrsServerSessionInfo;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.telemetry.internal.Sources;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * Every admin service over plain, mutable lists, recording the operations called on them:
 * what the telemetry readers' tests (JMX, /metrics, dashboard) read through.
 */
public final class StubAdmins {
    public final List<RdmaDeviceInfo> rdmaDevices = new ArrayList<>();
    public final List<RtrsClientSessionInfo> clientSessions = new ArrayList<>();
    public final List<RtrsServerSessionInfo> serverSessions = new ArrayList<>();
    public final List<RnbdServerAdmin.ExportInfo> exports = new ArrayList<>();
    public final List<RnbdClientAdmin.DeviceInfo> devices = new ArrayList<>();
    public NbdGatewayAdmin.GatewayInfo gateway;
    public final List<Provider> mpPolicies = new ArrayList<>();
    public final List<Provider> authenticators = new ArrayList<>();
    public final List<Provider> backends = new ArrayList<>();
    /** What the server's new paths authenticate with. */
    public String serverAuthMethod = "";
    /** Operations called, one line each ("addPath s p"). */
    public final List<String> calls = new ArrayList<>();

    public final RdmaAdmin rdma = () -> List.copyOf(rdmaDevices);

    public final RtrsClientAdmin rtrsClient = new RtrsClientAdmin() {
        @Override
        public List<RtrsClientSessionInfo> sessions() {
            return List.copyOf(clientSessions);
        }

        @Override
        public Optional<RtrsClientSessionInfo> session(String name) {
            return clientSessions.stream().filter(s -> s.name().equals(name)).findFirst();
        }

        private void call(String op, String session, Object arg) {
            if (session(session).isEmpty()) {
                throw new IllegalArgumentException("no session '" + session + "'");
            }
            calls.add(op + " " + session + (arg == null ? "" : " " + arg));
        }

        @Override
        public void addPath(String session, String path) {
            call("addPath", session, path);
        }

        @Override
        public void removePath(String session, String path) {
            call("removePath", session, path);
        }

        @Override
        public void reconnectPath(String session, String path) {
            call("reconnectPath", session, path);
        }

        @Override
        public void disconnectPath(String session, String path) {
            call("disconnectPath", session, path);
        }

        @Override
        public void setMpPolicy(String session, String policy) {
            call("setMpPolicy", session, policy);
        }

        @Override
        public void setMaxReconnectAttempts(String session, int attempts) {
            call("setMaxReconnectAttempts", session, attempts);
        }

        @Override
        public void resetStats(String session) {
            call("resetStats", session, null);
        }

        @Override
        public List<Provider> mpPolicies() {
            return List.copyOf(mpPolicies);
        }

        @Override
        public List<Provider> authenticators() {
            return List.copyOf(authenticators);
        }
    };

    public final RtrsServerAdmin rtrsServer = new RtrsServerAdmin() {
        @Override
        public List<RtrsServerSessionInfo> sessions() {
            return List.copyOf(serverSessions);
        }

        @Override
        public boolean closeSession(String name) {
            calls.add("closeSession " + name);
            return true;
        }

        @Override
        public String authMethod() {
            return serverAuthMethod;
        }
    };

    /** The next admin operation's failure (map, add an export ...); null: it answers {@link #answer}. */
    public IOException failOp;
    public String answer = "done";

    private String op(String call) throws IOException {
        calls.add(call);
        if (failOp != null) {
            throw failOp;
        }
        return answer;
    }

    public final RnbdServerAdmin rnbdServer = new RnbdServerAdmin() {
        @Override
        public List<ExportInfo> exports() {
            return List.copyOf(exports);
        }

        @Override
        public ExportResult addExport(ExportRequest r) throws IOException {
            return new ExportResult(null, op("addExport " + r));
        }

        @Override
        public ExportResult removeExport(String name, boolean force) throws IOException {
            return new ExportResult(null, op("removeExport " + name + " " + force));
        }

        @Override
        public void forceClose(String export, String session) {
            calls.add("forceClose " + export + " " + session);
        }

        @Override
        public void resetStats(String export) {
            calls.add("resetExportStats " + export);
        }

        @Override
        public List<Provider> backends() {
            return List.copyOf(backends);
        }
    };

    public final RnbdClientAdmin rnbdClient = new RnbdClientAdmin() {
        @Override
        public List<DeviceInfo> devices() {
            return List.copyOf(devices);
        }

        @Override
        public DeviceResult mapDevice(MapRequest r) throws IOException {
            return new DeviceResult(null, 0, op("mapDevice " + r));
        }

        @Override
        public DeviceResult unmapDevice(String device, boolean force) throws IOException {
            return new DeviceResult(null, 0, op("unmapDevice " + device + " " + force));
        }

        @Override
        public DeviceResult remapDevice(String device) throws IOException {
            return new DeviceResult(null, 0, op("remapDevice " + device));
        }

        @Override
        public DeviceResult resizeDevice(String device) throws IOException {
            return new DeviceResult(null, 0, op("resizeDevice " + device));
        }

        @Override
        public CompletableFuture<RemoteBlockDevice> map(String device, String session, String export,
                AccessMode mode) {
            calls.add("map " + device + " " + session + " " + export + " " + mode);
            return new CompletableFuture<>();
        }

        @Override
        public void unmap(String device, boolean force) throws IOException {
            calls.add("unmap " + device + " " + force);
        }

        @Override
        public CompletableFuture<RemoteBlockDevice> remap(String device) {
            calls.add("remap " + device);
            return new CompletableFuture<>();
        }

        @Override
        public CompletableFuture<Long> resize(String device) {
            calls.add("resize " + device);
            return CompletableFuture.completedFuture(0L);
        }
    };

    public final NbdGatewayAdmin nbdGateway = () -> gateway;

    /** All of them present. */
    public Sources sources() {
        return new Sources(() -> rdma, () -> rtrsClient, () -> rtrsServer, () -> rnbdServer, () -> rnbdClient,
                () -> gateway == null ? null : nbdGateway);
    }

    /** A latency histogram with {@code n} completions of {@code nanos} each. */
    public static LatencyHistogram.Snapshot latencies(int n, long nanos) {
        LatencyHistogram h = new LatencyHistogram();
        for (int i = 0; i < n; i++) {
            h.record(nanos);
        }
        return h.snapshot();
    }

    /** The default profile as the console would show it: two soft devices, one session of two paths, mem0 mapped as rnbd0. */
    public StubAdmins applianceProfile() {
        rdmaDevices.add(new RdmaDeviceInfo("soft0", "soft", "0a0b:0c0d:0e0f:1011", LinkState.ACTIVE,
                List.of("127.0.0.1"), List.of("rtrs-server", "rtrs-client"), Map.of("polls", 12L, "polls_skipped", 3L)));
        rdmaDevices.add(new RdmaDeviceInfo("soft1", "soft", "0a0b:0c0d:0e0f:1012", LinkState.ACTIVE,
                List.of("127.0.0.2"), List.of("rtrs-server", "rtrs-client"), Map.of("polls", 0L, "polls_skipped", 0L)));
        clientSessions.add(new RtrsClientSessionInfo("appliance", SessionState.CONNECTED, 0, 512, "min-inflight",
                "min-inflight", -1, List.of(
                clientPath("127.0.0.1@127.0.0.1", PathState.CONNECTED, "soft0", 1042, 80_000),
                clientPath("127.0.0.2@127.0.0.2", PathState.CONNECTED, "soft1", 877, 120_000))));
        UUID session = new UUID(1, 2);
        serverSessions.add(new RtrsServerSessionInfo("appliance", "host-a", session, 512, 131072, List.of(
                new RtrsServerPathInfo(new UUID(3, 4), "soft0", "127.0.0.1:1234", "127.0.0.1:40122", 3, 1),
                new RtrsServerPathInfo(new UUID(5, 6), "soft1", "127.0.0.2:1234", "127.0.0.2:40124", 3, 0)),
                new RtrsIoStats(1919, 1919 * 4096L, 0, 0, 1)));
        exports.add(new RnbdServerAdmin.ExportInfo("mem0", "memory", 1L << 30, RnbdServerAdmin.ExportState.ONLINE,
                false, List.of(new RnbdServerAdmin.Opener("appliance", AccessMode.RW, 0)),
                new BlockIoStats(1919, 1919 * 4096L, 0, 0, 0, 1, latencies(1919, 40_000)), ""));
        devices.add(new RnbdClientAdmin.DeviceInfo("rnbd0", "appliance", "mem0", AccessMode.RW, 1L << 30,
                RnbdClientAdmin.DeviceState.MAPPED, 1, new BlockIoStats(1919, 1919 * 4096L, 0, 0, 0, 1,
                latencies(1919, 150_000)), 0));
        gateway = new NbdGatewayAdmin.GatewayInfo("127.0.0.1:10809", "", List.of("rnbd0"), 1,
                new NbdGatewayAdmin.GatewayStats(4, 0, 0, 1, 1919, 0, 1919 * 4096L, 0));
        mpPolicies.add(new Provider("min-inflight", "rtrs-mp-min-inflight", "0.1.0.SNAPSHOT", 60, 0,
                List.of("appliance")));
        mpPolicies.add(new Provider("min-latency", "rtrs-mp-min-latency", "0.1.0.SNAPSHOT", 61, 0));
        mpPolicies.add(new Provider("round-robin", "rtrs-mp-round-robin", "0.1.0.SNAPSHOT", 59, 0));
        authenticators.add(new Provider("none", "rtrs-auth-none", "0.1.0.SNAPSHOT", 57, 0, List.of("client")));
        serverAuthMethod = "none";
        backends.add(new Provider("file", "rnbd-backend-file", "0.1.0.SNAPSHOT", 66, 0));
        backends.add(new Provider("memory", "rnbd-backend-memory", "0.1.0.SNAPSHOT", 67, 0, List.of("mem0")));
        return this;
    }

    public static RtrsClientPathInfo clientPath(String name, PathState state, String hca, long reads, long latencyNanos) {
        String[] sd = name.split("@");
        return new RtrsClientPathInfo(name, sd[0], sd[1] + ":1234", state, hca, 0, 0,
                new RtrsPathStats(new RtrsIoStats(reads, reads * 4096, 0, 0, 1), 0, 1, 0, 30_000, latencyNanos,
                        latencies((int) reads, latencyNanos)));
    }

    /** Replace the state of a client path (as a failover would). */
    public void pathState(String session, String path, PathState state) {
        for (int i = 0; i < clientSessions.size(); i++) {
            RtrsClientSessionInfo s = clientSessions.get(i);
            if (s.name().equals(session)) {
                List<RtrsClientPathInfo> paths = new ArrayList<>();
                for (RtrsClientPathInfo p : s.paths()) {
                    paths.add(p.name().equals(path) ? new RtrsClientPathInfo(p.name(), p.srcAddress(), p.dstAddress(),
                            state, state == PathState.CONNECTED ? p.device() : "", p.reconnectAttempts(), p.lastError(),
                            p.stats()) : p);
                }
                clientSessions.set(i, new RtrsClientSessionInfo(s.name(), s.state(), s.lastError(), s.queueDepth(),
                        s.mpPolicy(), s.activePolicy(), s.maxReconnectAttempts(), paths));
            }
        }
    }
}

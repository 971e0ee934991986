package io.rnbd.telemetry.jmx.internal;

import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import java.util.function.Supplier;

/**
 * The operations of the three subsystem MBeans. Path, policy and counter operations call
 * {@link RtrsClientAdmin} as the console does; map/unmap/export operations run the console's
 * commands ({@link ConsoleLine}). Not offered: the forced variants (unmap --force,
 * export-remove --force, force-close), server-session-close, link-add/link-del and key
 * management, which break IO or need more than a name to be safe.
 */
public final class Operations {
    private final Supplier<RtrsClientAdmin> rtrsClient;
    private final Supplier<RnbdClientAdmin> rnbdClient;
    private final Supplier<RnbdServerAdmin> rnbdServer;
    private final Supplier<ConsoleRunner> console;
    private final Runnable changed;

    /** Operations over the given services, told how to announce a change once there is someone to tell. */
    @FunctionalInterface
    public interface Factory {
        Operations create(Runnable changed);
    }

    /**
     * @param changed called after an operation that may add or remove MBeans (a path, a
     *                device, an export), so they appear without waiting for the next refresh
     */
    public Operations(Supplier<RtrsClientAdmin> rtrsClient, Supplier<RnbdClientAdmin> rnbdClient,
                      Supplier<RnbdServerAdmin> rnbdServer, Supplier<ConsoleRunner> console, Runnable changed) {
        this.rtrsClient = rtrsClient;
        this.rnbdClient = rnbdClient;
        this.rnbdServer = rnbdServer;
        this.console = console;
        this.changed = changed;
    }

    private static <T> T require(Supplier<T> s, String what) {
        T t = s.get();
        if (t == null) {
            throw new IllegalStateException("the " + what + " is not running");
        }
        return t;
    }

    private String then(String result) {
        changed.run();
        return result;
    }

    /** One line per provider: what a JMX console shows of a String[] at a glance. */
    private static String[] lines(java.util.List<io.rnbd.common.Provider> providers) {
        return providers.stream().map(p -> p.name() + " " + p.bundle() + " " + p.version() + " [" + p.bundleId() + "]")
                .toArray(String[]::new);
    }

    public RtrsClientMBean rtrsClient() {
        return new RtrsClientMBean() {
            private RtrsClientAdmin admin() {
                return require(rtrsClient, "RTRS client (bundle rtrs-client)");
            }

            @Override
            public String[] getSessions() {
                RtrsClientAdmin a = rtrsClient.get();
                return a == null ? new String[0] : a.sessions().stream().map(RtrsClientSessionInfo::name)
                        .toArray(String[]::new);
            }

            @Override
            public void addPath(String session, String path) {
                admin().addPath(session, path);
                changed.run();
            }

            @Override
            public void removePath(String session, String path) {
                admin().removePath(session, path);
                changed.run();
            }

            @Override
            public void reconnectPath(String session, String path) {
                admin().reconnectPath(session, path);
            }

            @Override
            public void disconnectPath(String session, String path) {
                admin().disconnectPath(session, path);
            }

            @Override
            public void setMpPolicy(String session, String policy) {
                admin().setMpPolicy(session, policy);
            }

            @Override
            public String[] getMpPolicies() {
                RtrsClientAdmin a = rtrsClient.get();
                return a == null ? new String[0] : lines(a.mpPolicies());
            }

            @Override
            public String[] getAuthenticators() {
                RtrsClientAdmin a = rtrsClient.get();
                return a == null ? new String[0] : lines(a.authenticators());
            }

            @Override
            public String setAuthMethod(String end, String method) {
                return ConsoleLine.of("rtrs:auth-method").arg("end", end).arg("method", method).run(console);
            }

            @Override
            public void setMaxReconnectAttempts(String session, int attempts) {
                admin().setMaxReconnectAttempts(session, attempts);
            }

            @Override
            public void resetStats(String session) {
                admin().resetStats(session);
            }
        };
    }

    public RnbdClientMBean rnbdClient() {
        return new RnbdClientMBean() {
            @Override
            public String[] getDevices() {
                RnbdClientAdmin a = rnbdClient.get();
                return a == null ? new String[0] : a.devices().stream().map(RnbdClientAdmin.DeviceInfo::name)
                        .toArray(String[]::new);
            }

            @Override
            public String map(String device, String session, String export, String mode) {
                return then(ConsoleLine.of("rnbd:map").option("--session", session).option("--export", export)
                        .option("--mode", mode).arg("device", device).run(console));
            }

            @Override
            public String unmap(String device) {
                return then(ConsoleLine.of("rnbd:unmap").arg("device", device).run(console));
            }

            @Override
            public String remap(String device) {
                return ConsoleLine.of("rnbd:remap").arg("device", device).run(console);
            }

            @Override
            public String resize(String device) {
                return ConsoleLine.of("rnbd:resize").arg("device", device).run(console);
            }
        };
    }

    public RnbdServerMBean rnbdServer() {
        return new RnbdServerMBean() {
            @Override
            public String[] getExports() {
                RnbdServerAdmin a = rnbdServer.get();
                return a == null ? new String[0] : a.exports().stream().map(RnbdServerAdmin.ExportInfo::name)
                        .toArray(String[]::new);
            }

            @Override
            public String addExport(String name, String backend, String size, String path, boolean create,
                    boolean readOnly) {
                return then(ConsoleLine.of("rnbd:export-add").option("--backend", backend).option("--size", size)
                        .option("--path", path).flag("--create", create).flag("--read-only", readOnly)
                        .arg("name", name).run(console));
            }

            @Override
            public String addExportWithParams(String name, String backend, String[] params, boolean readOnly) {
                return then(ConsoleLine.of("rnbd:export-add").option("--backend", backend).params("--param", params)
                        .flag("--read-only", readOnly).arg("name", name).run(console));
            }

            @Override
            public String[] getBackends() {
                RnbdServerAdmin a = rnbdServer.get();
                return a == null ? new String[0] : lines(a.backends());
            }

            @Override
            public String removeExport(String name) {
                return then(ConsoleLine.of("rnbd:export-remove").arg("name", name).run(console));
            }
        };
    }
}

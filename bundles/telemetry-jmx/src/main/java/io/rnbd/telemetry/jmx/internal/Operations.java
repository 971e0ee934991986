package io.rnbd.telemetry.jmx.internal;

import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import java.util.function.Supplier;

/**
 * The operations of the three subsystem MBeans, thin faces of the admin services as the
 * console's commands are: path, policy and counter operations call {@link RtrsClientAdmin};
 * setAuthMethod {@link RtrsClientAdmin#setAuthMethod} or {@link RtrsServerAdmin#setAuthMethod};
 * map/unmap/remap/resize call {@link RnbdClientAdmin}'s operations, export add/remove
 * {@link RnbdServerAdmin}'s, which check their input, keep the configuration and wait for the
 * outcome; an operation returns the line the console prints, or fails with it (errno first).
 * Not offered: the forced variants (unmap --force,
 * export-remove --force, force-close), server-session-close, link-add/link-del and key
 * management, which break IO or need more than a name to be safe.
 */
public final class Operations {
    private final Supplier<RtrsClientAdmin> rtrsClient;
    private final Supplier<RnbdClientAdmin> rnbdClient;
    private final Supplier<RnbdServerAdmin> rnbdServer;
    private final Supplier<RtrsServerAdmin> rtrsServer;
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
    public Operations(Supplier<RtrsClientAdmin> rtrsClient, Supplier<RtrsServerAdmin> rtrsServer,
                      Supplier<RnbdClientAdmin> rnbdClient, Supplier<RnbdServerAdmin> rnbdServer, Runnable changed) {
        this.rtrsClient = rtrsClient;
        this.rtrsServer = rtrsServer;
        this.rnbdClient = rnbdClient;
        this.rnbdServer = rnbdServer;
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

    /** An admin operation's failure as JMX carries it: its one line, errno first, no stack. */
    @FunctionalInterface
    private interface Op {
        String run() throws java.io.IOException;
    }

    private static String call(Op op) {
        try {
            return op.run();
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException(e.getMessage());
        }
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
                if ("client".equals(end)) {
                    return call(() -> admin().setAuthMethod(method));
                }
                if ("server".equals(end)) {
                    return call(() -> require(rtrsServer, "RTRS server (bundle rtrs-server)").setAuthMethod(method));
                }
                throw new IllegalArgumentException("EINVAL: end must be client or server, not '" + end + "'");
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

            private RnbdClientAdmin admin() {
                return require(rnbdClient, "RNBD client (bundle rnbd-client)");
            }

            @Override
            public String map(String device, String session, String export, String mode) {
                return then(call(() -> admin().mapDevice(RnbdClientAdmin.MapRequest.parse(device, session, export,
                        mode)).message()));
            }

            @Override
            public String unmap(String device) {
                return then(call(() -> admin().unmapDevice(device, false).message()));
            }

            @Override
            public String remap(String device) {
                return call(() -> admin().remapDevice(device).message());
            }

            @Override
            public String resize(String device) {
                return call(() -> admin().resizeDevice(device).message());
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

            private RnbdServerAdmin admin() {
                return require(rnbdServer, "RNBD server (bundle rnbd-server)");
            }

            @Override
            public String addExport(String name, String backend, String size, String path, boolean create,
                    boolean readOnly) {
                java.util.Map<String, String> params = new java.util.TreeMap<>();
                if (size != null && !size.isEmpty()) {
                    params.put("size", size);
                }
                if (path != null && !path.isEmpty()) {
                    params.put("path", path);
                }
                if (create) {
                    params.put("create", "true");
                }
                return then(call(() -> admin().addExport(new RnbdServerAdmin.ExportRequest(name, backend, params,
                        readOnly)).message()));
            }

            @Override
            public String addExportWithParams(String name, String backend, String[] params, boolean readOnly) {
                return then(call(() -> admin().addExport(new RnbdServerAdmin.ExportRequest(name, backend,
                        RnbdServerAdmin.ExportRequest.params(params == null ? java.util.List.of()
                                : java.util.Arrays.asList(params)), readOnly)).message()));
            }

            @Override
            public String[] getBackends() {
                RnbdServerAdmin a = rnbdServer.get();
                return a == null ? new String[0] : lines(a.backends());
            }

            @Override
            public String removeExport(String name) {
                return then(call(() -> admin().removeExport(name, false).message()));
            }
        };
    }
}

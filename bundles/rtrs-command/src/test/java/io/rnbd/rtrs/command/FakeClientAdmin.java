package io.rnbd.rtrs.command;

import io.rnbd.common.Provider;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.api.RtrsIoStats;
import io.rnbd.rtrs.api.RtrsPathStats;
import io.rnbd.rtrs.api.SessionState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** An RTRS client admin over plain records, failing like the real one (IllegalArgumentException). */
final class FakeClientAdmin implements RtrsClientAdmin {
    final Map<String, RtrsClientSessionInfo> sessions = new TreeMap<>();
    final List<String> calls = new ArrayList<>();
    final List<Provider> policies = new ArrayList<>();
    final List<Provider> authenticators = new ArrayList<>();

    @Override
    public List<Provider> mpPolicies() {
        return List.copyOf(policies);
    }

    @Override
    public List<Provider> authenticators() {
        return List.copyOf(authenticators);
    }

    static RtrsClientPathInfo path(String src, String dst, PathState state, long reads) {
        return new RtrsClientPathInfo(src + "@" + dst, src, dst, state, state == PathState.CONNECTED ? "soft0" : "",
                0, 0, new RtrsPathStats(new RtrsIoStats(reads, reads * 4096, 2, 8192, 1), 3, 4, 5, 12_345, 67_890));
    }

    FakeClientAdmin add(String name, RtrsClientPathInfo... paths) {
        sessions.put(name, new RtrsClientSessionInfo(name, SessionState.CONNECTED, 0, 512, "min-inflight",
                "min-inflight", -1, List.of(paths)));
        return this;
    }

    FakeClientAdmin put(RtrsClientSessionInfo s) {
        sessions.put(s.name(), s);
        return this;
    }

    @Override
    public List<RtrsClientSessionInfo> sessions() {
        return List.copyOf(sessions.values());
    }

    @Override
    public Optional<RtrsClientSessionInfo> session(String name) {
        return Optional.ofNullable(sessions.get(name));
    }

    private RtrsClientSessionInfo known(String name) {
        RtrsClientSessionInfo s = sessions.get(name);
        if (s == null) {
            throw new IllegalArgumentException("no session " + name);
        }
        return s;
    }

    private void replacePaths(RtrsClientSessionInfo s, List<RtrsClientPathInfo> paths) {
        sessions.put(s.name(), new RtrsClientSessionInfo(s.name(), s.state(), s.lastError(), s.queueDepth(),
                s.mpPolicy(), s.activePolicy(), s.maxReconnectAttempts(), paths));
    }

    private RtrsClientPathInfo knownPath(RtrsClientSessionInfo s, String path) {
        // as the real client: the name, or the address typed without the port
        return s.paths().stream().filter(p -> p.name().equals(path) || p.name().equals(path + ":1234")).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("session " + s.name() + " has no path " + path));
    }

    @Override
    public void addPath(String session, String path) {
        calls.add("add " + session + " " + path);
        RtrsClientSessionInfo s = known(session);
        if (!path.contains("@")) {
            throw new IllegalArgumentException("malformed path '" + path + "'");
        }
        String[] sd = path.split("@", 2);
        List<RtrsClientPathInfo> paths = new ArrayList<>(s.paths());
        // named as the real client names a new path: src@dst:port, the session's port unless given
        RtrsClientPathInfo p = path(sd[0], sd[1].contains(":") ? sd[1] : sd[1] + ":1234", PathState.CONNECTING, 0);
        paths.add(p);
        replacePaths(s, paths);
    }

    @Override
    public void removePath(String session, String path) {
        calls.add("remove " + session + " " + path);
        RtrsClientSessionInfo s = known(session);
        RtrsClientPathInfo p = knownPath(s, path);
        List<RtrsClientPathInfo> paths = new ArrayList<>(s.paths());
        paths.remove(p);
        replacePaths(s, paths);
    }

    private void setState(String session, String path, PathState state) {
        RtrsClientSessionInfo s = known(session);
        RtrsClientPathInfo p = knownPath(s, path);
        List<RtrsClientPathInfo> paths = new ArrayList<>(s.paths());
        paths.set(paths.indexOf(p), new RtrsClientPathInfo(p.name(), p.srcAddress(), p.dstAddress(), state,
                p.device(), p.reconnectAttempts(), p.lastError(), p.stats()));
        replacePaths(s, paths);
    }

    @Override
    public void reconnectPath(String session, String path) {
        calls.add("reconnect " + session + " " + path);
        setState(session, path, PathState.RECONNECTING);
    }

    @Override
    public void disconnectPath(String session, String path) {
        calls.add("disconnect " + session + " " + path);
        setState(session, path, PathState.CLOSED);
    }

    @Override
    public void setMpPolicy(String session, String policy) {
        calls.add("mp " + session + " " + policy);
        RtrsClientSessionInfo s = known(session);
        sessions.put(session, new RtrsClientSessionInfo(s.name(), s.state(), s.lastError(), s.queueDepth(), policy,
                policy.equals("min-latency") ? "round-robin" : policy, s.maxReconnectAttempts(), s.paths()));
    }

    @Override
    public void setMaxReconnectAttempts(String session, int attempts) {
        calls.add("max " + session + " " + attempts);
        RtrsClientSessionInfo s = known(session);
        sessions.put(session, new RtrsClientSessionInfo(s.name(), s.state(), s.lastError(), s.queueDepth(),
                s.mpPolicy(), s.activePolicy(), attempts, s.paths()));
    }

    @Override
    public void resetStats(String session) {
        calls.add("reset " + session);
        known(session);
    }
}

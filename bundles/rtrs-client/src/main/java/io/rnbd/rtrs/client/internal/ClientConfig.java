package io.rnbd.rtrs.client.internal;

import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.proto.Rtrs;

import java.util.List;

/**
 * A session's settings (factory PID {@code io.rnbd.rtrs.client.session}); times in
 * milliseconds here, the OSGi layer converts {@code reconnect.delay.sec}.
 */
public record ClientConfig(String sessionName, List<PathAddress> paths, String mpPolicy, int maxReconnectAttempts,
                           int reconnectDelayMs, int reconnectBackoffMs, long ioTimeoutMs, int consPerPath,
                           String hostId, long hbIntervalMs, int hbMissedMax, long requestTimeoutMs) {
    /** Linux's block layer times a request out after 30 s. */
    public static final long DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
    /**
     * What a session's IO waits, as configured (component default), while no path is connected:
     * a minute, as dm-multipath's widely used {@code no_path_retry 12} at its 5 s polling
     * interval, rather than Linux RTRS's EIO at once. Every hot swap of the appliance's own
     * bundles (a transport update drops every path) then completes instead of failing IO:
     * measured at most a few seconds on the default profile (docs/reliability.md). It also
     * outlasts three reconnect rounds at the default {@code reconnect.delay.sec} of 10 s with its
     * jitter (at most 15 + 16.5 + 18 s), so a remote server that restarts within about half a
     * minute costs no IO. A session whose server is really gone fails each request with EIO a
     * minute after it was queued, and says so in the log.
     */
    public static final long DEFAULT_IO_TIMEOUT_MS = 60_000;

    public ClientConfig(String sessionName, List<PathAddress> paths, String mpPolicy, int maxReconnectAttempts,
                        int reconnectDelayMs, int reconnectBackoffMs, long ioTimeoutMs, int consPerPath,
                        String hostId, long hbIntervalMs, int hbMissedMax) {
        this(sessionName, paths, mpPolicy, maxReconnectAttempts, reconnectDelayMs, reconnectBackoffMs, ioTimeoutMs,
                consPerPath, hostId, hbIntervalMs, hbMissedMax, DEFAULT_REQUEST_TIMEOUT_MS);
    }

    public ClientConfig {
        if (requestTimeoutMs < 0) {
            throw new IllegalArgumentException("request.timeout.ms must be >= 0");
        }
        // Linux's client and server refuse '/' and '.' in the name (rtrs_clt_open, process_info_req)
        if (sessionName == null || sessionName.isBlank() || sessionName.length() >= Rtrs.NAME_MAX
                || !sessionName.chars().allMatch(c -> c > 0x20 && c < 0x7f && c != '/' && c != '.')) {
            throw new IllegalArgumentException("session.name must be 1-254 printable ASCII characters without / and .");
        }
        paths = List.copyOf(paths);
        if (paths.isEmpty() || paths.size() > Rtrs.MAX_PATHS) {
            throw new IllegalArgumentException("paths must list 1.." + Rtrs.MAX_PATHS + " paths");
        }
        if (maxReconnectAttempts < -1 || maxReconnectAttempts > 9999) {
            throw new IllegalArgumentException("max.reconnect.attempts must be -1..9999");
        }
        if (reconnectDelayMs < 0 || reconnectBackoffMs < 0 || ioTimeoutMs < 0 || consPerPath < 0
                || hbIntervalMs <= 0 || hbMissedMax <= 0) {
            throw new IllegalArgumentException("negative or zero timing value");
        }
    }

    /**
     * Kernel-like defaults for {@code name} over {@code paths}: IO fails at once while no path
     * is connected, as Linux RTRS does (a configured session waits {@link #DEFAULT_IO_TIMEOUT_MS}).
     */
    public static ClientConfig of(String name, List<PathAddress> paths) {
        return new ClientConfig(name, paths, MultipathPolicy.MIN_INFLIGHT, -1, 10_000, 1000, 0, 0, hostName(),
                Rtrs.HB_INTERVAL_MS, Rtrs.HB_MISSED_MAX);
    }

    public ClientConfig withTimings(int reconnectDelayMs, int backoffMs, long ioTimeoutMs, long hbIntervalMs,
                                    int hbMissedMax) {
        return new ClientConfig(sessionName, paths, mpPolicy, maxReconnectAttempts, reconnectDelayMs, backoffMs,
                ioTimeoutMs, consPerPath, hostId, hbIntervalMs, hbMissedMax, requestTimeoutMs);
    }

    public ClientConfig withCons(int cons) {
        return new ClientConfig(sessionName, paths, mpPolicy, maxReconnectAttempts, reconnectDelayMs,
                reconnectBackoffMs, ioTimeoutMs, cons, hostId, hbIntervalMs, hbMissedMax, requestTimeoutMs);
    }

    public ClientConfig withMaxReconnectAttempts(int n) {
        return new ClientConfig(sessionName, paths, mpPolicy, n, reconnectDelayMs,
                reconnectBackoffMs, ioTimeoutMs, consPerPath, hostId, hbIntervalMs, hbMissedMax, requestTimeoutMs);
    }

    /** 0 = never time a request out. */
    public ClientConfig withRequestTimeout(long ms) {
        return new ClientConfig(sessionName, paths, mpPolicy, maxReconnectAttempts, reconnectDelayMs,
                reconnectBackoffMs, ioTimeoutMs, consPerPath, hostId, hbIntervalMs, hbMissedMax, ms);
    }

    public int effectiveCons() {
        return consPerPath == 0 ? Runtime.getRuntime().availableProcessors() : consPerPath;
    }

    static String hostName() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            return "localhost";
        }
    }
}

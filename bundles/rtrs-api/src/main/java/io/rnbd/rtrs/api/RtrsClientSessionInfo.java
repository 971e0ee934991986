package io.rnbd.rtrs.api;

import java.util.List;

/**
 * A client session snapshot.
 *
 * @param mpPolicy     the configured multipath policy name
 * @param activePolicy the policy actually in use now (a fallback while the configured one is absent)
 */
public record RtrsClientSessionInfo(String name, SessionState state, int lastError, int queueDepth,
                                    String mpPolicy, String activePolicy, int maxReconnectAttempts,
                                    List<RtrsClientPathInfo> paths) {
    public RtrsClientSessionInfo {
        paths = List.copyOf(paths);
    }
}

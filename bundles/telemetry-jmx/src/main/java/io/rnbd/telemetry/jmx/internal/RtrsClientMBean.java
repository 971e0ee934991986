package io.rnbd.telemetry.jmx.internal;

/**
 * {@code io.rnbd:type=rtrs-client}: the rtrs client commands that change a running session,
 * as the console has them (rtrs:path-add, path-remove, path-reconnect, path-disconnect,
 * mp-policy, max-reconnect-attempts, stats --reset). Errors are the console's messages.
 */
public interface RtrsClientMBean {
    /** Names of the client sessions. */
    String[] getSessions();

    void addPath(String session, String path);

    void removePath(String session, String path);

    void reconnectPath(String session, String path);

    void disconnectPath(String session, String path);

    /** By the name a registered policy announces (the MBeans {@code io.rnbd:type=rtrs-mp-policy} list them). */
    void setMpPolicy(String session, String policy);

    /** The multipath policies registered, as {@code rtrs:mp-policies} lists them: {@code name bundle version [id]}. */
    String[] getMpPolicies();

    void setMaxReconnectAttempts(String session, int attempts);

    void resetStats(String session);
}

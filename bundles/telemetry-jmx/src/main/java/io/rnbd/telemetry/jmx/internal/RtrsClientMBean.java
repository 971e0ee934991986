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

    /** The authenticators registered, as {@code rtrs:authenticators} lists them: {@code name bundle version [id]}. */
    String[] getAuthenticators();

    /**
     * {@code rtrs:auth-method END METHOD}: new paths of the client or the server use the registered
     * authenticator {@code method} ({@code default}: the best-ranked one), kept in configuration
     * ({@code RtrsClientAdmin.setAuthMethod}, {@code RtrsServerAdmin.setAuthMethod}); returns the
     * console's line, or fails with the service's, errno first.
     */
    String setAuthMethod(String end, String method);

    void setMaxReconnectAttempts(String session, int attempts);

    void resetStats(String session);
}

package io.rnbd.rtrs.api;

import java.util.List;
import java.util.Optional;

/**
 * Administration of RTRS client sessions (the kernel's rtrs-client sysfs), registered as an
 * OSGi service. Methods naming an unknown session or path, or an invalid value, throw
 * {@link IllegalArgumentException} with a one-line message fit for a console.
 */
public interface RtrsClientAdmin {
    List<RtrsClientSessionInfo> sessions();

    Optional<RtrsClientSessionInfo> session(String name);

    /** Add a path {@code [src@]dst[:port]} (at most 128 per session); it starts connecting. */
    void addPath(String session, String path);

    /** Close and forget a path; its inflight IO fails over. */
    void removePath(String session, String path);

    /** Drop the path's connections and connect again at once (resets its attempt count). */
    void reconnectPath(String session, String path);

    /** Close the path's connections and keep it closed until {@link #reconnectPath}. */
    void disconnectPath(String session, String path);

    /** Choose the multipath policy by name (round-robin, min-inflight, min-latency). */
    void setMpPolicy(String session, String policy);

    /** -1 = forever, 0..9999. */
    void setMaxReconnectAttempts(String session, int attempts);

    /** Zero every counter of the session's paths. */
    void resetStats(String session);
}

package io.rnbd.rtrs.api;

import java.util.List;

/** Administration of the RTRS server (for console commands), registered as an OSGi service. */
public interface RtrsServerAdmin {
    List<RtrsServerSessionInfo> sessions();

    /**
     * Force-close a session: every path of it is disconnected.
     *
     * @return false if no session has that name
     */
    boolean closeSession(String name);

    /**
     * The method new paths must pass now: the configured {@code auth.method} (even while its
     * bundle is not running: new paths are then refused with EAGAIN), else the best-ranked
     * authenticator's; empty when none (no authentication).
     *
     * @since 1.6
     */
    default String authMethod() {
        return "";
    }
}

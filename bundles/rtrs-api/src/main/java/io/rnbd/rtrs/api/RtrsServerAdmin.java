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
}

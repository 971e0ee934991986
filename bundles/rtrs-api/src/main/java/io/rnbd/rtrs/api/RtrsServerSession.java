package io.rnbd.rtrs.api;

import java.util.UUID;

/** A client session as the server sees it. */
public interface RtrsServerSession {
    /** The session name the client chose. */
    String name();

    /** The authenticated host identity ("" when authentication is off). */
    String hostId();

    UUID uuid();

    /** Number of connected paths. */
    int pathCount();

    /** Force-close: drop every path of this session. */
    void close();
}

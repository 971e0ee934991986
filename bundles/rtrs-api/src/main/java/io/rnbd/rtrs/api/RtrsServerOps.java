package io.rnbd.rtrs.api;

/**
 * The upper layer of an RTRS server (RNBD's server implements it), registered as an OSGi
 * service; the RTRS server uses the highest-ranked one.
 */
public interface RtrsServerOps {
    /**
     * A request from a client. Call {@link RtrsServerRequest#complete} once, from any thread
     * (a later call is ignored). Must not block the calling transport thread on slow work.
     */
    void onRequest(RtrsServerRequest request);

    /** A session (its first path) is established. */
    default void onSessionConnected(RtrsServerSession session) {
    }

    /** A session's last path is gone: release everything held for it. */
    default void onSessionClosed(RtrsServerSession session) {
    }
}

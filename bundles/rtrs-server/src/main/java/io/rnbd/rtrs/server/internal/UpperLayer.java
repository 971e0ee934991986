package io.rnbd.rtrs.server.internal;

import io.rnbd.rtrs.api.RtrsServerRequest;
import io.rnbd.rtrs.api.RtrsServerSession;

/**
 * The upper layer (RNBD's server, an {@code RtrsServerOps}) as the sessions see it: requests
 * and session events go through here, whether an upper layer is there or not.
 * {@link UpperLayerHandoff} has the one implementation. Any thread; never under a lock it
 * could wait on.
 */
interface UpperLayer {
    /** Hand a request over; while there is no upper layer it waits ({@code upper.wait.ms}). */
    void dispatch(RtrsServerRequest r);

    /** The session's first path connected: the upper layer hears of it, once. */
    void sessionConnected(RtrsServerSession s);

    /**
     * The session left (it is {@code closed()} already): the upper layer hears of it once, if
     * it heard of the session; from the timer thread when {@code async} (the caller holds
     * the session's lock), else inline.
     */
    void sessionClosed(RtrsServerSession s, boolean async);
}

package io.rnbd.rtrs.api;

/** A client session as a whole. */
public enum SessionState {
    /** No path connected yet. */
    CONNECTING,
    /** At least one path connected: IO flows. */
    CONNECTED,
    /** Every path is down; IO waits up to {@code io.timeout}, reconnects are running. */
    DISCONNECTED,
    /** Gave up for good (e.g. authentication failed): see {@link RtrsClientSession#lastError()}. */
    FAILED,
    CLOSED
}

package io.rnbd.rdma.api;

/** Queue pair state, reduced to what callers observe. */
public enum QpState {
    /** Created, connection not yet established; RECVs may be posted. */
    INIT,
    /** Connected: ready to send and receive. */
    RTS,
    /** Failed or disconnected: posted requests flush, new posts are refused. */
    ERROR,
    /** Destroyed. */
    CLOSED
}

package io.rnbd.rtrs.api;

/** Client path states, as the kernel's rtrs_clt_state. */
public enum PathState {
    CONNECTING,
    CONNECTING_ERR,
    RECONNECTING,
    CONNECTED,
    CLOSING,
    CLOSED,
    DEAD
}

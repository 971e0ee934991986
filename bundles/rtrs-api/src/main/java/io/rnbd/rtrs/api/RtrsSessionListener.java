package io.rnbd.rtrs.api;

/** Session state changes, for the upper layer (RNBD remaps its devices on reconnect). */
@FunctionalInterface
public interface RtrsSessionListener {
    /**
     * @param errno reason for a failure state, 0 otherwise
     */
    void onStateChange(RtrsClientSession session, SessionState state, int errno);
}

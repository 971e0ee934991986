package io.rnbd.rtrs.api;

/**
 * One side of one authentication conversation, driven by the transport over the path's
 * service connection before the server reveals its chunk addresses and keys.
 *
 * <p>The initiator calls {@code step(new byte[0])} to get the first message; each side
 * then feeds the peer's message and sends back what {@code step} returns, until
 * {@code step} returns {@code null} (nothing more to send) and {@link #done()} is true.
 */
public interface AuthExchange {
    /** @return the next message to send, or null when this side has finished */
    byte[] step(byte[] peerMessage) throws AuthException;

    /** True once the peer is authenticated (and, if mutual, we are too). */
    boolean done();

    /** Target side: the authenticated host identity; initiator side: the target's or "". */
    String peerId();

    /**
     * Target side, once {@link #done()}: whether the host <em>proved</em> {@link #peerId()}
     * (it showed it holds a secret bound to that id, as CHAP's response does) rather than
     * merely claimed it ({@code none}). False unless an authenticator says otherwise: an
     * export that requires a proven identity never trusts an exchange that does not know.
     */
    default boolean peerIdProven() {
        return false;
    }
}

package io.rnbd.rtrs.api;

import java.util.UUID;

/** A client session as the server sees it. */
public interface RtrsServerSession {
    /** The session name the client chose. */
    String name();

    /**
     * The host identity the client gave through the authenticator ("" when it did not
     * authenticate: authentication off, or a client without this appliance's extensions,
     * such as Linux's). Proven only if {@link #hostIdProven()} says so; otherwise a claim
     * anyone could have made.
     */
    String hostId();

    /**
     * Whether an authenticator proved {@link #hostId()} (CHAP) for every path of the
     * session, rather than it being merely claimed ({@code none}) or absent. Access control
     * must match allow lists only against a proven id, unless it explicitly trusts claims.
     */
    default boolean hostIdProven() {
        return false;
    }

    /**
     * Whether the client speaks this appliance's RTRS extensions (authentication, FENCE): set
     * by a bit Linux's client never sends, so false means Linux's rnbd-client or another
     * peer that knows only Linux's protocol.
     */
    default boolean extensions() {
        return false;
    }

    /** The authentication method that gave {@link #hostId()} ("chap", "none"), or "" if none ran. */
    default String authMethod() {
        return "";
    }

    UUID uuid();

    /** Number of connected paths. */
    int pathCount();

    /**
     * Whether the session is gone for good: its last path closed, or its server stopped.
     * Set before {@link RtrsServerOps#onSessionClosed} is called, so an upper layer that sees
     * a request of a closed session after (or while) it released what it held for it must
     * not hold anything for it again; a new session of the same client is another object.
     */
    default boolean closed() {
        return false;
    }

    /** Force-close: drop every path of this session. */
    void close();
}

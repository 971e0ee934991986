package io.rnbd.rtrs.api;

/**
 * Session authentication, registered as an OSGi service with the property
 * {@link #PROP_METHOD} ({@code none}, {@code chap}). Swapping the service changes how new
 * paths authenticate; established ones keep running.
 */
public interface Authenticator {
    String PROP_METHOD = "rtrs.auth";

    /** Method name carried on the wire, at most 15 ASCII bytes. */
    String method();

    /**
     * Host side: authenticate as {@code hostId}.
     *
     * @throws AuthException ENOKEY when no key is configured for {@code hostId}
     */
    AuthExchange initiate(String hostId) throws AuthException;

    /** Target side: a fresh exchange for one connecting path. */
    AuthExchange respond();
}

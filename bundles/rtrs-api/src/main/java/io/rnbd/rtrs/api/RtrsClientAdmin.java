package io.rnbd.rtrs.api;

import io.rnbd.common.Provider;
import java.util.List;
import java.util.Optional;

/**
 * Administration of RTRS client sessions (the kernel's rtrs-client sysfs), registered as an
 * OSGi service. Methods naming an unknown session or path, or an invalid value, throw
 * {@link IllegalArgumentException} with a one-line message fit for a console.
 */
public interface RtrsClientAdmin {
    List<RtrsClientSessionInfo> sessions();

    Optional<RtrsClientSessionInfo> session(String name);

    /** Add a path {@code [src@]dst[:port]} (at most 128 per session); it starts connecting. */
    void addPath(String session, String path);

    /** Close and forget a path; its inflight IO fails over. */
    void removePath(String session, String path);

    /** Drop the path's connections and connect again at once (resets its attempt count). */
    void reconnectPath(String session, String path);

    /** Close the path's connections and keep it closed until {@link #reconnectPath}. */
    void disconnectPath(String session, String path);

    /**
     * Choose the multipath policy by the name a registered policy service announces
     * ({@code rtrs.mp.policy}: a third-party bundle's as well as round-robin, min-inflight,
     * min-latency); the appliance's own three are taken while stopped too (the session falls
     * back until the bundle is back). Any other name is refused, with the names that are known.
     */
    void setMpPolicy(String session, String policy);

    /**
     * The multipath policy services registered now, best-ranked first, with their bundles:
     * what {@link #setMpPolicy} takes.
     *
     * @since 1.6
     */
    default List<Provider> mpPolicies() {
        return List.of();
    }

    /**
     * The authenticator services registered now, best-ranked first, with their bundles: what
     * {@code auth.method} takes ({@code rtrs.auth}).
     *
     * @since 1.6
     */
    default List<Provider> authenticators() {
        return List.of();
    }

    /**
     * The method new paths of this client authenticate with now: the configured
     * {@code auth.method} (even while its bundle is not running: the paths then wait for it),
     * else the best-ranked authenticator's; empty when none.
     *
     * @since 1.6
     */
    default String authMethod() {
        return "";
    }

    /**
     * Set the authenticator new paths of this client use: {@code method} is the name a
     * registered authenticator announces ({@link #authenticators}, a bundle of the user's own
     * too), or {@link Authenticators#DEFAULT} for the best-ranked one present. Kept as
     * {@code auth.method} of the client's configuration ({@code io.rnbd.rtrs.client}), so it
     * stays; established paths keep running.
     *
     * @return the outcome in one line, as the console prints it and JMX returns it
     * @throws RtrsAdminException EINVAL (no such authenticator registered: nothing is written),
     *                            EAGAIN (ConfigAdmin is not running), EIO (it failed to write)
     * @since 1.10
     */
    default String setAuthMethod(String method) throws java.io.IOException {
        throw new RtrsAdminException(io.rnbd.common.Errno.EOPNOTSUPP, "this RTRS client cannot set its "
                + "authentication method");
    }

    /** -1 = forever, 0..9999. */
    void setMaxReconnectAttempts(String session, int attempts);

    /** Zero every counter of the session's paths. */
    void resetStats(String session);
}

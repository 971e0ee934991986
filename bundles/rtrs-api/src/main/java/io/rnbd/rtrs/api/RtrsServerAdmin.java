package io.rnbd.rtrs.api;

import java.util.List;

/** Administration of the RTRS server (for the console, JMX and telemetry), registered as an OSGi service. */
public interface RtrsServerAdmin {
    List<RtrsServerSessionInfo> sessions();

    /**
     * Force-close a session: every path of it is disconnected.
     *
     * @return false if no session has that name
     */
    boolean closeSession(String name);

    /**
     * The method new paths must pass now: the configured {@code auth.method} (even while its
     * bundle is not running: new paths are then refused with EAGAIN), else the best-ranked
     * authenticator's; empty when none (no authentication).
     *
     * @since 1.6
     */
    default String authMethod() {
        return "";
    }

    /**
     * Set the authenticator new paths must pass: {@code method} is the name of an
     * authenticator registered on this server, or {@link Authenticators#DEFAULT} for the
     * best-ranked one present. Kept as {@code auth.method} of the server's configuration
     * ({@code io.rnbd.rtrs.server}), so it stays; the server is not restarted, established
     * paths keep running.
     *
     * @return the outcome in one line, as the console prints it and JMX returns it
     * @throws RtrsAdminException EINVAL (no such authenticator registered: nothing is written),
     *                            EAGAIN (ConfigAdmin is not running), EIO (it failed to write)
     * @since 1.10
     */
    default String setAuthMethod(String method) throws java.io.IOException {
        throw new RtrsAdminException(io.rnbd.common.Errno.EOPNOTSUPP, "this RTRS server cannot set its "
                + "authentication method");
    }
}

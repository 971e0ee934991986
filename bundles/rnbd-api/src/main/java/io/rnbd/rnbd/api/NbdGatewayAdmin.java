package io.rnbd.rnbd.api;

import java.util.List;

/**
 * Where the NBD gateway's admin view was until it moved to its own layer's API,
 * {@code io.rnbd.nbd.gateway.api.NbdGatewayAdmin} (bundle nbd-gateway-api). Nothing registers or
 * reads this one any more; it stays, deprecated, so that bundles built against rnbd-api 1.x (a
 * backend of your own: docs/extending.md) keep resolving, and goes at rnbd-api 2.0.
 *
 * @deprecated use {@code io.rnbd.nbd.gateway.api.NbdGatewayAdmin}
 */
@Deprecated(since = "1.12", forRemoval = true)
public interface NbdGatewayAdmin {
    /**
     * @param address         the TCP address listened on, {@code host:port} ("" when none)
     * @param unixSocket      the Unix socket path listened on ("" when none)
     * @param exports         names of the devices served, sorted
     * @param connectionsOpen NBD connections open now
     * @param hostTuning      host settings that hold the gateway back, each with the command that
     *                        fixes it ("" when none): what the gateway logged at start, read afresh
     */
    record GatewayInfo(String address, String unixSocket, List<String> exports, int connectionsOpen,
                       GatewayStats stats, String hostTuning) {
        public GatewayInfo {
            exports = List.copyOf(exports);
            hostTuning = hostTuning == null ? "" : hostTuning;
        }

        /** Without host tuning advice. */
        public GatewayInfo(String address, String unixSocket, List<String> exports, int connectionsOpen,
                           GatewayStats stats) {
            this(address, unixSocket, exports, connectionsOpen, stats, "");
        }
    }

    /**
     * Counters since the gateway started.
     *
     * @param connections       connections accepted
     * @param refused           connections refused because too many were open
     * @param handshakeTimeouts connections closed because the option haggling took too long
     * @param dropped           connections closed on a protocol error or a broken socket
     * @param requests          transmission requests read
     * @param errors            requests answered with an error
     * @param bytesRead         bytes sent to clients in read replies
     * @param bytesWritten      bytes clients sent in write requests
     */
    record GatewayStats(long connections, long refused, long handshakeTimeouts, long dropped, long requests,
                        long errors, long bytesRead, long bytesWritten) {
    }

    GatewayInfo info();
}

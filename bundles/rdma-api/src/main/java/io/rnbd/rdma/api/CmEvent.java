package io.rnbd.rdma.api;

/**
 * A connection manager event for one connection.
 *
 * @param type   what happened
 * @param status errno for the failure types (e.g. the peer's reject reason), else 0
 * @param detail human-readable reason, never null
 */
public record CmEvent(Type type, int status, String detail) {
    public enum Type {
        /** The connection is up: both sides may post sends. */
        ESTABLISHED,
        /** The peer refused (status carries its reason). */
        REJECTED,
        /** The destination could not be reached (no route, nobody listening). */
        UNREACHABLE,
        /** Connecting failed otherwise (timeout, protocol error). */
        CONNECT_ERROR,
        /** The connection dropped or was disconnected by either side. */
        DISCONNECTED,
        /** The device under this connection is going away. */
        DEVICE_REMOVAL
    }

    public static CmEvent of(Type type) {
        return new CmEvent(type, 0, type.name().toLowerCase());
    }
}

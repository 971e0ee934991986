package io.rnbd.rdma.api;

/**
 * A connection manager event for one connection.
 *
 * @param type        what happened
 * @param status      errno for the failure types (e.g. the peer's reject reason), else 0
 * @param detail      human-readable reason, never null
 * @param privateData the peer's private data: on the initiator's {@link Type#ESTABLISHED}
 *                    what the acceptor passed to accept, on {@link Type#REJECTED} what the
 *                    rejecter passed to reject; empty otherwise or where none came. A
 *                    provider may deliver more bytes than were sent (see
 *                    {@link ConnectRequest#privateData()}).
 */
public record CmEvent(Type type, int status, String detail, byte[] privateData) {
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

    public CmEvent {
        privateData = privateData == null ? new byte[0] : privateData.clone();
    }

    public CmEvent(Type type, int status, String detail) {
        this(type, status, detail, null);
    }

    public static CmEvent of(Type type) {
        return new CmEvent(type, 0, type.name().toLowerCase());
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CmEvent e && e.type == type && e.status == status && e.detail.equals(detail)
                && java.util.Arrays.equals(e.privateData, privateData);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(type, status, detail, java.util.Arrays.hashCode(privateData));
    }

    @Override
    public String toString() {
        return "CmEvent[" + type + ", status=" + status + ", " + detail + ", privateData=" + privateData.length + " bytes]";
    }
}

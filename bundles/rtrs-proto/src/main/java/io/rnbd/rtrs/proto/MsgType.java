package io.rnbd.rtrs.proto;

import io.rnbd.common.Errno;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The {@code type u16} that starts every message after the connection handshake
 * (rtrs_msg_types 0..4; 5..7 are this implementation's extensions).
 */
public enum MsgType {
    INFO_REQ(0),
    INFO_RSP(1),
    RDMA_WRITE(2),
    RDMA_READ(3),
    RKEY_RSP(4),
    AUTH(5),
    FENCE_REQ(6),
    FENCE_RSP(7);

    private final int code;

    MsgType(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    public static MsgType of(int code) throws ProtoException {
        for (MsgType t : values()) {
            if (t.code == code) {
                return t;
            }
        }
        throw new ProtoException(Errno.EPROTO, "unknown message type " + code);
    }

    /** The type of the message at {@code buf}'s position, without consuming it. */
    public static MsgType peek(ByteBuffer buf) throws ProtoException {
        if (buf.remaining() < 2) {
            throw new ProtoException(Errno.EBADMSG, "message shorter than its type");
        }
        return of(buf.duplicate().order(ByteOrder.LITTLE_ENDIAN).getShort(buf.position()) & 0xffff);
    }
}

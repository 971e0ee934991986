package io.rnbd.rnbd.proto;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** enum rnbd_msg_type, with the fixed size of each message. */
public enum MsgType {
    SESS_INFO(0, SessInfo.SIZE),
    SESS_INFO_RSP(1, SessInfoRsp.SIZE),
    OPEN(2, Open.SIZE),
    OPEN_RSP(3, OpenRsp.SIZE),
    IO(4, Io.SIZE),
    CLOSE(5, Close.SIZE);

    /** Every message starts with {type u16, pad u16}. */
    public static final int HEADER_SIZE = 4;

    private final int wire;
    private final int size;

    MsgType(int wire, int size) {
        this.wire = wire;
        this.size = size;
    }

    public int wire() {
        return wire;
    }

    /** Size in bytes of the whole message of this type. */
    public int size() {
        return size;
    }

    /** The type of the message at {@code buf}'s position, without consuming anything. */
    public static MsgType peek(ByteBuffer buf) throws ProtoException {
        if (buf.remaining() < HEADER_SIZE) {
            throw new ProtoException(Errno.EMSGSIZE, "message of " + buf.remaining() + " bytes has no header");
        }
        int v = Short.toUnsignedInt(buf.duplicate().order(ByteOrder.LITTLE_ENDIAN).getShort(buf.position()));
        for (MsgType t : values()) {
            if (t.wire == v) {
                return t;
            }
        }
        throw new ProtoException(Errno.EBADMSG, "unknown message type " + v);
    }
}

package io.rnbd.rnbd.proto;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;

/** One RNBD message. */
public sealed interface RnbdMsg permits SessInfo, SessInfoRsp, Open, OpenRsp, Close, Io {
    /**
     * Protocol version spoken here (RNBD_PROTO_VER_MAJOR.MINOR = 2.2: WRITE_ZEROES, PREFLUSH,
     * NOUNMAP). Only the major travels (SESS_INFO): a peer's minor is never known.
     */
    int VERSION_MAJOR = 2;
    int VERSION_MINOR = 2;

    MsgType type();

    /** Write the message at {@code buf}'s position and advance past it. */
    void encode(ByteBuffer buf);

    /** A fresh buffer holding just this message, ready to read. */
    default ByteBuffer toBuffer() {
        ByteBuffer b = ByteBuffer.allocate(type().size());
        encode(b);
        return b.flip();
    }

    /**
     * Decode one whole message: {@code buf} must hold exactly one message (position..limit),
     * as an RTRS user header does.
     */
    static RnbdMsg decode(ByteBuffer buf) throws ProtoException {
        MsgType type = MsgType.peek(buf);
        if (buf.remaining() != type.size()) {
            throw new ProtoException(Errno.EMSGSIZE,
                    type + " is " + type.size() + " bytes, got " + buf.remaining());
        }
        switch (type) {
            case SESS_INFO: return SessInfo.decode(buf);
            case SESS_INFO_RSP: return SessInfoRsp.decode(buf);
            case OPEN: return Open.decode(buf);
            case OPEN_RSP: return OpenRsp.decode(buf);
            case IO: return Io.decode(buf);
            case CLOSE: return Close.decode(buf);
            default: throw new ProtoException(Errno.EBADMSG, "unhandled type " + type);
        }
    }
}

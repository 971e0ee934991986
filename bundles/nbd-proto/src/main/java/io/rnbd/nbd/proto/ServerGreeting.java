package io.rnbd.nbd.proto;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;

/**
 * The server's first message in newstyle negotiation.
 * <pre>
 *  0  u64 NBDMAGIC
 *  8  u64 IHAVEOPT
 * 16  u16 handshake flags
 * </pre>
 */
public record ServerGreeting(int handshakeFlags) {
    public static final int SIZE = 18;

    public void encode(ByteBuffer buf) {
        buf.putLong(NbdConstants.NBDMAGIC).putLong(NbdConstants.IHAVEOPT).putShort((short) handshakeFlags);
    }

    public static ServerGreeting decode(ByteBuffer buf) throws NbdProtoException {
        Codec.need(buf, SIZE, "greeting");
        if (buf.getLong() != NbdConstants.NBDMAGIC) {
            throw new NbdProtoException(Errno.EPROTO, "not an NBD server (no NBDMAGIC)");
        }
        if (buf.getLong() != NbdConstants.IHAVEOPT) {
            throw new NbdProtoException(Errno.EPROTONOSUPPORT, "not a newstyle NBD server (oldstyle?)");
        }
        return new ServerGreeting(Short.toUnsignedInt(buf.getShort()));
    }
}

package io.rnbd.nbd.proto;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;

/**
 * An option request during the handshake; {@code length} bytes of option data follow.
 * <pre>
 *  0  u64 IHAVEOPT
 *  8  u32 option
 * 12  u32 length of option data (unsigned)
 * </pre>
 */
public record OptionHeader(int option, long length) {
    public static final int SIZE = 16;

    public OptionHeader {
        if (length < 0 || length > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("option length out of u32 range: " + length);
        }
    }

    public void encode(ByteBuffer buf) {
        buf.putLong(NbdConstants.IHAVEOPT).putInt(option).putInt((int) length);
    }

    public static OptionHeader decode(ByteBuffer buf) throws NbdProtoException {
        Codec.need(buf, SIZE, "option header");
        long magic = buf.getLong();
        if (magic != NbdConstants.IHAVEOPT) {
            throw new NbdProtoException(Errno.EPROTO, String.format("bad option magic 0x%016x", magic));
        }
        int option = buf.getInt();
        return new OptionHeader(option, Integer.toUnsignedLong(buf.getInt()));
    }
}

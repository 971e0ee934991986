package io.rnbd.nbd.proto;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;

/**
 * The header of every fixed-newstyle option reply; {@code length} bytes of reply data follow.
 * <pre>
 *  0  u64 0x3e889045565a9
 *  8  u32 option being answered
 * 12  u32 reply type (NBD_REP_*, bit 31 = error)
 * 16  u32 length of reply data
 * </pre>
 */
public record OptionReplyHeader(int option, int type, int length) {
    public static final int SIZE = 20;

    public void encode(ByteBuffer buf) {
        buf.putLong(NbdConstants.OPT_REPLY_MAGIC).putInt(option).putInt(type).putInt(length);
    }

    public static OptionReplyHeader decode(ByteBuffer buf) throws NbdProtoException {
        Codec.need(buf, SIZE, "option reply");
        long magic = buf.getLong();
        if (magic != NbdConstants.OPT_REPLY_MAGIC) {
            throw new NbdProtoException(Errno.EPROTO, String.format("bad option reply magic 0x%016x", magic));
        }
        int option = buf.getInt();
        int type = buf.getInt();
        int length = buf.getInt();
        if (length < 0 || length > Codec.MAX_OPTION_DATA) {
            throw new NbdProtoException(Errno.EMSGSIZE, "option reply of " + Integer.toUnsignedString(length) + " bytes");
        }
        return new OptionReplyHeader(option, type, length);
    }

    public boolean isError() {
        return (type & NbdConstants.REP_FLAG_ERROR) != 0;
    }
}

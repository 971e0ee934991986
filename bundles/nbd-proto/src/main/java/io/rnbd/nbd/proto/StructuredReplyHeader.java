package io.rnbd.nbd.proto;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;

/**
 * A structured reply chunk header; {@code length} bytes of payload follow.
 * <pre>
 *  0  u32 0x668e33ef
 *  4  u16 flags (NBD_REPLY_FLAG_DONE)
 *  6  u16 type (NBD_REPLY_TYPE_*)
 *  8  u64 handle
 * 16  u32 payload length
 * </pre>
 * An NBD_REPLY_TYPE_OFFSET_DATA payload starts with the u64 offset ({@link #OFFSET_DATA_PREFIX});
 * an error payload is {@link StructuredError}.
 */
public record StructuredReplyHeader(int flags, int type, long handle, int length) {
    public static final int SIZE = 20;
    /** The u64 offset before the data of an OFFSET_DATA chunk. */
    public static final int OFFSET_DATA_PREFIX = 8;

    public void encode(ByteBuffer buf) {
        buf.putInt(NbdConstants.STRUCTURED_REPLY_MAGIC).putShort((short) flags).putShort((short) type)
                .putLong(handle).putInt(length);
    }

    public static StructuredReplyHeader decode(ByteBuffer buf) throws NbdProtoException {
        Codec.need(buf, SIZE, "structured reply");
        int magic = buf.getInt();
        if (magic != NbdConstants.STRUCTURED_REPLY_MAGIC) {
            throw new NbdProtoException(Errno.EPROTO, String.format("bad structured reply magic 0x%08x", magic));
        }
        int flags = Short.toUnsignedInt(buf.getShort());
        int type = Short.toUnsignedInt(buf.getShort());
        return new StructuredReplyHeader(flags, type, buf.getLong(), buf.getInt());
    }

    public boolean done() {
        return (flags & NbdConstants.REPLY_FLAG_DONE) != 0;
    }
}

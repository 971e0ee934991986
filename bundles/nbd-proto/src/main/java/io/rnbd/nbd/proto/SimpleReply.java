package io.rnbd.nbd.proto;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;

/**
 * A simple reply; a successful NBD_CMD_READ is followed by the data.
 * <pre>
 *  0  u32 0x67446698
 *  4  u32 error (NBD_E*, 0 = success)
 *  8  u64 handle
 * </pre>
 */
public record SimpleReply(int error, long handle) {
    public static final int SIZE = 16;

    public void encode(ByteBuffer buf) {
        buf.putInt(NbdConstants.SIMPLE_REPLY_MAGIC).putInt(error).putLong(handle);
    }

    public static SimpleReply decode(ByteBuffer buf) throws NbdProtoException {
        Codec.need(buf, SIZE, "simple reply");
        int magic = buf.getInt();
        if (magic != NbdConstants.SIMPLE_REPLY_MAGIC) {
            throw new NbdProtoException(Errno.EPROTO, String.format("bad reply magic 0x%08x", magic));
        }
        return new SimpleReply(buf.getInt(), buf.getLong());
    }
}

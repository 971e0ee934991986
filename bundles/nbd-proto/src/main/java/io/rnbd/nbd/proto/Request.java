package io.rnbd.nbd.proto;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;

/**
 * A transmission request; NBD_CMD_WRITE is followed by {@code length} bytes of data.
 * <pre>
 *  0  u32 0x25609513
 *  4  u16 command flags
 *  6  u16 type (NBD_CMD_*)
 *  8  u64 handle
 * 16  u64 offset (unsigned)
 * 24  u32 length (unsigned)
 * </pre>
 */
public record Request(int flags, int type, long handle, long offset, long length) {
    public static final int SIZE = 28;

    public Request {
        if (length < 0 || length > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("request length out of u32 range: " + length);
        }
    }

    public void encode(ByteBuffer buf) {
        buf.putInt(NbdConstants.REQUEST_MAGIC).putShort((short) flags).putShort((short) type)
                .putLong(handle).putLong(offset).putInt((int) length);
    }

    public static Request decode(ByteBuffer buf) throws NbdProtoException {
        Codec.need(buf, SIZE, "request");
        int magic = buf.getInt();
        if (magic != NbdConstants.REQUEST_MAGIC) {
            throw new NbdProtoException(Errno.EPROTO, String.format("bad request magic 0x%08x", magic));
        }
        int flags = Short.toUnsignedInt(buf.getShort());
        int type = Short.toUnsignedInt(buf.getShort());
        long handle = buf.getLong();
        long offset = buf.getLong();
        return new Request(flags, type, handle, offset, Integer.toUnsignedLong(buf.getInt()));
    }

    public boolean has(int cmdFlag) {
        return (flags & cmdFlag) != 0;
    }
}

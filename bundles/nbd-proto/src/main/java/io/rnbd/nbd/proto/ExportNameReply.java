package io.rnbd.nbd.proto;

import java.nio.ByteBuffer;

/**
 * The server's answer to NBD_OPT_EXPORT_NAME (no option reply header): size and transmission
 * flags, then 124 zero bytes unless the client negotiated NBD_FLAG_C_NO_ZEROES.
 * <pre>
 *  0  u64 export size
 *  8  u16 transmission flags
 * 10  124 zero bytes (reserved, omitted with NO_ZEROES)
 * </pre>
 */
public record ExportNameReply(long size, int transmissionFlags) {
    public static final int SIZE = 10;
    public static final int ZEROES = 124;

    public void encode(ByteBuffer buf, boolean noZeroes) {
        buf.putLong(size).putShort((short) transmissionFlags);
        if (!noZeroes) {
            for (int i = 0; i < ZEROES; i++) {
                buf.put((byte) 0);
            }
        }
    }

    /** Decodes the first {@link #SIZE} bytes; the caller skips the zeroes it expects. */
    public static ExportNameReply decode(ByteBuffer buf) throws NbdProtoException {
        Codec.need(buf, SIZE, "export name reply");
        long size = buf.getLong();
        int flags = Short.toUnsignedInt(buf.getShort());
        Codec.checkTransmission(size, flags);
        return new ExportNameReply(size, flags);
    }
}

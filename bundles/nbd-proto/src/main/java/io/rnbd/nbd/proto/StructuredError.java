package io.rnbd.nbd.proto;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;

/**
 * The payload of an NBD_REPLY_TYPE_ERROR chunk.
 * <pre>
 *  0  u32 error (non-zero NBD_E*)
 *  4  u16 message length (m)
 *  6  m bytes message for humans
 * </pre>
 */
public record StructuredError(int error, String message) {
    /** Longest message we send: keeps every reply header small. */
    public static final int MAX_MESSAGE = 200;

    public StructuredError {
        if (error == 0) {
            throw new IllegalArgumentException("an error chunk needs a non-zero error");
        }
    }

    public int encodedSize() {
        return 6 + bytes().length;
    }

    public void encode(ByteBuffer buf) {
        byte[] m = bytes();
        buf.putInt(error).putShort((short) m.length).put(m);
    }

    private byte[] bytes() {
        byte[] m = Codec.utf8(message, "error message");
        if (m.length <= MAX_MESSAGE) {
            return m;
        }
        // Cut on a character boundary so the message stays valid UTF-8.
        int end = MAX_MESSAGE;
        while (end > 0 && (m[end] & 0xC0) == 0x80) {
            end--;
        }
        return java.util.Arrays.copyOf(m, end);
    }

    /** Decodes the payload of an error chunk of {@code length} bytes (position..limit). */
    public static StructuredError decode(ByteBuffer buf) throws NbdProtoException {
        Codec.need(buf, 6, "error chunk");
        int error = buf.getInt();
        int len = Short.toUnsignedInt(buf.getShort());
        if (len > buf.remaining()) {
            throw new NbdProtoException(Errno.EBADMSG, "error message longer than its chunk");
        }
        String msg = Codec.string(buf, len, "error message");
        if (error == 0) {
            throw new NbdProtoException(Errno.EBADMSG, "error chunk with error 0");
        }
        return new StructuredError(error, msg);
    }
}

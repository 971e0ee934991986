package io.rnbd.rtrs.auth.chap.internal.msg;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.AuthException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A DH-HMAC-CHAP message. Little-endian; every message starts with the 4-byte header
 * {@code u8 type, u8 version (1), u16 transaction id}; reserved bytes are zero.
 * The layouts are private to the {@code chap} method (the transport carries them as opaque
 * bytes after agreeing on the method), so the codec lives here rather than in rtrs-proto.
 */
public sealed interface ChapMessage permits Negotiate, Challenge, Reply, Success1, Success2, Failure1 {
    int HEADER_SIZE = 4;
    int VERSION = 1;

    int TYPE_NEGOTIATE = 0x00;
    int TYPE_CHALLENGE = 0x01;
    int TYPE_REPLY = 0x02;
    int TYPE_SUCCESS1 = 0x03;
    int TYPE_SUCCESS2 = 0x04;
    int TYPE_FAILURE1 = 0xF1;

    int type();

    /** Transaction id, chosen by the host in NEGOTIATE and echoed by every later message. */
    int tid();

    /** Encoded size in bytes. */
    int size();

    /** Writes the body after the header. */
    void encodeBody(ByteBuffer buf);

    default void encode(ByteBuffer buf) {
        ByteBuffer b = buf.order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) type()).put((byte) VERSION).putShort((short) tid());
        encodeBody(b);
    }

    default byte[] toBytes() {
        ByteBuffer b = ByteBuffer.allocate(size()).order(ByteOrder.LITTLE_ENDIAN);
        encode(b);
        return b.array();
    }

    /**
     * Decodes one whole message. Anything malformed fails with EBADMSG (bad lengths, reserved
     * bits, values) or EPROTO (unknown type or version), never with an unchecked exception.
     */
    static ChapMessage decode(byte[] bytes) throws AuthException {
        if (bytes == null || bytes.length < HEADER_SIZE) {
            throw new AuthException(Errno.EBADMSG, "CHAP message of " + (bytes == null ? 0 : bytes.length)
                    + " bytes is shorter than its header");
        }
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int type = Wire.u8(b);
        int version = Wire.u8(b);
        int tid = Wire.u16(b);
        if (version != VERSION) {
            throw new AuthException(Errno.EPROTO, "unsupported CHAP message version " + version);
        }
        ChapMessage m;
        try {
            m = switch (type) {
                case TYPE_NEGOTIATE -> Negotiate.decodeBody(tid, b);
                case TYPE_CHALLENGE -> Challenge.decodeBody(tid, b);
                case TYPE_REPLY -> Reply.decodeBody(tid, b);
                case TYPE_SUCCESS1 -> Success1.decodeBody(tid, b);
                case TYPE_SUCCESS2 -> Success2.decodeBody(tid, b);
                case TYPE_FAILURE1 -> Failure1.decodeBody(tid, b);
                default -> throw new AuthException(Errno.EPROTO, String.format("unknown CHAP message type 0x%02x", type));
            };
        } catch (RuntimeException e) {
            // the decoders check every length first; this only guards against a missed case
            throw new AuthException(Errno.EBADMSG, "malformed CHAP message type " + type);
        }
        if (b.hasRemaining()) {
            throw new AuthException(Errno.EBADMSG, b.remaining() + " trailing bytes after CHAP message type " + type);
        }
        return m;
    }
}

package io.rnbd.rtrs.auth.chap.internal.msg;

import io.rnbd.rtrs.api.AuthException;
import java.nio.ByteBuffer;

/**
 * FAILURE1, target → host: the exchange failed; the errno tells the host why (ENOKEY: no
 * key for this host, EKEYREJECTED: wrong response, EPROTO/EBADMSG: bad message,
 * EOPNOTSUPP: no common hash or DH group).
 * <pre>
 *  0 header (type 0xF1)
 *  4 u16 errno (positive, non-zero)
 *  6 u16 reserved
 * </pre>
 */
public record Failure1(int tid, int errno) implements ChapMessage {
    public static final int SIZE = 8;

    @Override
    public int type() {
        return TYPE_FAILURE1;
    }

    @Override
    public int size() {
        return SIZE;
    }

    @Override
    public void encodeBody(ByteBuffer b) {
        b.putShort((short) errno).putShort((short) 0);
    }

    static Failure1 decodeBody(int tid, ByteBuffer b) throws AuthException {
        Wire.need(b, SIZE - HEADER_SIZE, "FAILURE1");
        int errno = b.getShort() & 0xFFFF;
        Wire.reserved(b.getShort(), "FAILURE1");
        if (errno == 0) {
            Wire.bad("FAILURE1 without an errno");
        }
        return new Failure1(tid, errno);
    }
}

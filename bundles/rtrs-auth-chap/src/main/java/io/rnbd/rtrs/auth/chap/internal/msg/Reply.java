package io.rnbd.rtrs.auth.chap.internal.msg;

import io.rnbd.rtrs.api.AuthException;
import java.nio.ByteBuffer;

/**
 * REPLY, host → target: the host's response R1, the host's DH public value, and for
 * bidirectional authentication a challenge C2 with a non-zero sequence number S2.
 * <pre>
 *  0 header (type 0x02)
 *  4 u8  hl (32, 48, 64)
 *  5 u8  cvalid: 1 if C2 follows R1 (bidirectional), else 0
 *  6 u16 DH value length
 *  8 u32 S2 (non-zero exactly when cvalid)
 * 12 R1[hl], C2[hl] if cvalid, DH value
 * </pre>
 */
public record Reply(int tid, byte[] r1, byte[] c2, long s2, byte[] dhValue) implements ChapMessage {
    public static final int FIXED_SIZE = 12;

    public boolean bidirectional() {
        return c2 != null;
    }

    @Override
    public int type() {
        return TYPE_REPLY;
    }

    @Override
    public int size() {
        return FIXED_SIZE + r1.length + (c2 == null ? 0 : c2.length) + dhValue.length;
    }

    @Override
    public void encodeBody(ByteBuffer b) {
        b.put((byte) r1.length).put((byte) (c2 == null ? 0 : 1)).putShort((short) dhValue.length);
        b.putInt((int) s2).put(r1);
        if (c2 != null) {
            b.put(c2);
        }
        b.put(dhValue);
    }

    static Reply decodeBody(int tid, ByteBuffer b) throws AuthException {
        Wire.need(b, FIXED_SIZE - HEADER_SIZE, "REPLY");
        int hl = b.get() & 0xFF;
        int cvalid = b.get() & 0xFF;
        int dhLen = b.getShort() & 0xFFFF;
        long s2 = b.getInt() & 0xFFFFFFFFL;
        if (hl != 32 && hl != 48 && hl != 64) {
            Wire.bad("REPLY hash length " + hl);
        }
        if (cvalid > 1 || (cvalid == 1) != (s2 != 0)) {
            Wire.bad("REPLY cvalid " + cvalid + " inconsistent with S2");
        }
        byte[] r1 = Wire.bytes(b, hl, "REPLY R1");
        byte[] c2 = cvalid == 1 ? Wire.bytes(b, hl, "REPLY C2") : null;
        byte[] dh = Wire.bytes(b, dhLen, "REPLY DH value");
        return new Reply(tid, r1, c2, s2, dh);
    }
}

package io.rnbd.rtrs.auth.chap.internal.msg;

import io.rnbd.rtrs.api.AuthException;
import java.nio.ByteBuffer;

/**
 * SUCCESS1, target → host: R1 was right; carries the target's response R2 when the host
 * asked for bidirectional authentication.
 * <pre>
 *  0 header (type 0x03)
 *  4 u8  rvalid: 1 if R2 follows
 *  5 u8  hl (0 when rvalid is 0, else 32, 48, 64)
 *  6 u16 reserved
 *  8 R2[hl]
 * </pre>
 */
public record Success1(int tid, byte[] r2) implements ChapMessage {
    public static final int FIXED_SIZE = 8;

    @Override
    public int type() {
        return TYPE_SUCCESS1;
    }

    @Override
    public int size() {
        return FIXED_SIZE + (r2 == null ? 0 : r2.length);
    }

    @Override
    public void encodeBody(ByteBuffer b) {
        b.put((byte) (r2 == null ? 0 : 1)).put((byte) (r2 == null ? 0 : r2.length)).putShort((short) 0);
        if (r2 != null) {
            b.put(r2);
        }
    }

    static Success1 decodeBody(int tid, ByteBuffer b) throws AuthException {
        Wire.need(b, FIXED_SIZE - HEADER_SIZE, "SUCCESS1");
        int rvalid = b.get() & 0xFF;
        int hl = b.get() & 0xFF;
        Wire.reserved(b.getShort(), "SUCCESS1");
        if (rvalid > 1 || (rvalid == 0 && hl != 0) || (rvalid == 1 && hl != 32 && hl != 48 && hl != 64)) {
            Wire.bad("SUCCESS1 rvalid " + rvalid + " with hash length " + hl);
        }
        return new Success1(tid, rvalid == 1 ? Wire.bytes(b, hl, "SUCCESS1 R2") : null);
    }
}

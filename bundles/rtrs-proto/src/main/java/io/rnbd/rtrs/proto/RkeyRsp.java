package io.rnbd.rtrs.proto;

import java.nio.ByteBuffer;

/**
 * rtrs_msg_rkey_rsp (rtrs-pri.h), 8 bytes: a chunk's new rkey after always_invalidate
 * re-registered it. It is the payload of the IO response itself: a SEND_WITH_IMM whose IMM
 * is the response's (IO_RSP, or IO_RSP_W_INV when the read region was also invalidated).
 *
 * <pre>
 *  0 u16 type (4)   2 u16 buf_id   4 u32 rkey
 * </pre>
 */
public record RkeyRsp(int bufId, int rkey) {
    public static final int SIZE = 8;

    public RkeyRsp {
        Wire.checkU16(bufId, "buf_id");
    }

    public void encode(ByteBuffer dst) {
        ByteBuffer b = Wire.put(dst, SIZE);
        b.putShort(0, (short) MsgType.RKEY_RSP.code());
        b.putShort(2, (short) bufId);
        b.putInt(4, rkey);
    }

    public static RkeyRsp decode(ByteBuffer src) throws ProtoException {
        ByteBuffer b = Wire.take(src, SIZE, "RKEY_RSP");
        Wire.expectType(b, MsgType.RKEY_RSP);
        return new RkeyRsp(Wire.u16(b, 2), b.getInt(4));
    }
}

package io.rnbd.rtrs.proto;

import java.nio.ByteBuffer;

/**
 * RTRS_MSG_RKEY_RSP (rtrs_msg_rkey_rsp), 8 bytes: a chunk's new rkey after
 * always_invalidate re-registered it; travels as SEND_WITH_IMM with IMM IO_RSP_W_INV.
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

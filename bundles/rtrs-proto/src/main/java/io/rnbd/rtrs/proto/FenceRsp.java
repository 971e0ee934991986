package io.rnbd.rtrs.proto;

import java.nio.ByteBuffer;

/**
 * Extension: the answer to {@link FenceReq}, sent only once the fenced path is closed and
 * none of its requests is still running in the upper layer.
 *
 * <pre>
 *  0 u16 type (7)   2 u16 status (positive errno)   4 u32 fence_id
 *  8 u32 completed (requests the fence waited for)   12 u32 dropped (arrived, never started)
 * </pre>
 */
public record FenceRsp(int fenceId, int status, int completed, int dropped) {
    public static final int SIZE = 16;

    public FenceRsp {
        Wire.checkU16(status, "status");
    }

    public void encode(ByteBuffer dst) {
        ByteBuffer b = Wire.put(dst, SIZE);
        b.putShort(0, (short) MsgType.FENCE_RSP.code());
        b.putShort(2, (short) status);
        b.putInt(4, fenceId);
        b.putInt(8, completed);
        b.putInt(12, dropped);
    }

    public static FenceRsp decode(ByteBuffer src) throws ProtoException {
        ByteBuffer b = Wire.take(src, SIZE, "FENCE_RSP");
        Wire.expectType(b, MsgType.FENCE_RSP);
        return new FenceRsp(b.getInt(4), Wire.u16(b, 2), b.getInt(8), b.getInt(12));
    }
}

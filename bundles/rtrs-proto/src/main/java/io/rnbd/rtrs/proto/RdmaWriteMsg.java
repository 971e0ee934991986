package io.rnbd.rtrs.proto;

import java.nio.ByteBuffer;

/**
 * RTRS_MSG_WRITE trailer (rtrs_msg_rdma_write), 4 bytes, after {@code [data][user header]}
 * in the chunk; the IO_REQ IMM points at it.
 *
 * <pre>
 *  0 u16 type (2)   2 u16 usr_len
 * </pre>
 */
public record RdmaWriteMsg(int usrLen) {
    public static final int SIZE = 4;

    public RdmaWriteMsg {
        Wire.checkU16(usrLen, "usr_len");
    }

    public void encode(ByteBuffer dst) {
        ByteBuffer b = Wire.put(dst, SIZE);
        b.putShort(0, (short) MsgType.RDMA_WRITE.code());
        b.putShort(2, (short) usrLen);
    }

    public static RdmaWriteMsg decode(ByteBuffer src) throws ProtoException {
        ByteBuffer b = Wire.take(src, SIZE, "RDMA_WRITE");
        Wire.expectType(b, MsgType.RDMA_WRITE);
        return new RdmaWriteMsg(Wire.u16(b, 2));
    }
}

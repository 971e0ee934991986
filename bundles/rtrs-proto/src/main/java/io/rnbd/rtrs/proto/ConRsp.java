package io.rnbd.rtrs.proto;

import io.rnbd.rdma.api.Errno;

import java.nio.ByteBuffer;

/**
 * RTRS_MSG_CON_RSP (rtrs_msg_conn_rsp), 56 bytes, the server's first SEND on a connection.
 *
 * <pre>
 *  0 u16 magic   2 u16 version   4 s16 errno (negative, e.g. -EBUSY)   6 u16 queue_depth
 *  8 u32 max_io_size   12 u32 max_hdr_size   16 u32 flags   20 u8[36] reserved
 * </pre>
 * Flags: {@link #NEW_RKEY_F} (kernel: always_invalidate is on); extensions:
 * {@link #AUTH_F} (authenticate on connection 0 before INFO_REQ) and {@link #DNR_F}
 * (the refusal in errno will not change on retry: do not reconnect).
 */
public record ConRsp(int version, int errno, int queueDepth, int maxIoSize, int maxHdrSize, int flags) {
    public static final int SIZE = 56;
    public static final int NEW_RKEY_F = 1;
    public static final int AUTH_F = 1 << 8;
    public static final int DNR_F = 1 << 9;

    public ConRsp {
        Wire.checkU16(version, "version");
        Wire.checkU16(queueDepth, "queue_depth");
        if (errno < 0 || errno > 0x7fff) {
            throw new IllegalArgumentException("errno must be a positive errno");
        }
    }

    public static ConRsp accept(int queueDepth, int maxIoSize, int maxHdrSize, int flags) {
        return new ConRsp(Rtrs.VERSION, 0, queueDepth, maxIoSize, maxHdrSize, flags);
    }

    public static ConRsp refuse(int errno, boolean doNotRetry) {
        return new ConRsp(Rtrs.VERSION, errno, 0, 0, 0, doNotRetry ? DNR_F : 0);
    }

    public boolean has(int flag) {
        return (flags & flag) != 0;
    }

    public void encode(ByteBuffer dst) {
        ByteBuffer b = Wire.put(dst, SIZE);
        b.putShort(0, (short) Rtrs.MAGIC);
        b.putShort(2, (short) version);
        b.putShort(4, (short) -errno);
        b.putShort(6, (short) queueDepth);
        b.putInt(8, maxIoSize);
        b.putInt(12, maxHdrSize);
        b.putInt(16, flags);
    }

    public static ConRsp decode(ByteBuffer src) throws ProtoException {
        ByteBuffer b = Wire.take(src, SIZE, "CON_RSP");
        if (Wire.u16(b, 0) != Rtrs.MAGIC) {
            throw new ProtoException(Errno.EPROTO, "CON_RSP: bad magic");
        }
        int version = Wire.u16(b, 2);
        if (!Rtrs.compatible(version)) {
            throw new ProtoException(Errno.EPROTONOSUPPORT, "CON_RSP: unsupported version 0x" + Integer.toHexString(version));
        }
        int err = b.getShort(4);
        if (err > 0 || err == Short.MIN_VALUE) {
            throw new ProtoException(Errno.EPROTO, "CON_RSP: positive errno");
        }
        int qd = Wire.u16(b, 6);
        int maxIo = b.getInt(8);
        int maxHdr = b.getInt(12);
        Wire.zeroes(b, 20, SIZE, "CON_RSP");
        if (err == 0 && (qd == 0 || maxIo <= 0 || maxHdr <= 0 || maxHdr > Rtrs.MAX_HDR_SIZE)) {
            throw new ProtoException(Errno.EINVAL, "CON_RSP: impossible limits qd=" + qd + " max_io=" + maxIo
                    + " max_hdr=" + maxHdr);
        }
        return new ConRsp(version, -err, qd, maxIo, maxHdr, b.getInt(16));
    }
}

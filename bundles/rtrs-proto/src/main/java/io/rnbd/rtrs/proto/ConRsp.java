package io.rnbd.rtrs.proto;

import io.rnbd.common.Errno;

import java.nio.ByteBuffer;

/**
 * rtrs_msg_conn_rsp (rtrs-pri.h, Linux 6.1 and mainline), 56 bytes: the private data of
 * the server's {@code rdma_accept} (rtrs_rdma_do_accept), or of its {@code rdma_reject}
 * with only magic, version and a negative errno (rtrs_rdma_do_reject).
 *
 * <pre>
 *  0 le16 magic   2 le16 version   4 le16 errno (negative, e.g. -EBUSY)   6 le16 queue_depth
 *  8 le32 max_io_size   12 le32 max_hdr_size   16 le32 flags   20 u8[36] reserved
 * </pre>
 * Flags (rtrs_msg_flags): {@link #NEW_RKEY_F} (1 << 1: the server runs always_invalidate and
 * answers every IO with an RKEY_RSP). The client's chunk size is max_io_size + max_hdr_size.
 *
 * <p>Extensions, bits Linux never sets and only sent to a client that set
 * {@link ConReq#EXT_F}: {@link #EXT_F} (this server speaks them: FENCE), {@link #AUTH_F}
 * (authenticate on connection 0 before INFO_REQ) and {@link #DNR_F} (with an errno: the
 * refusal will not change on retry).
 */
public record ConRsp(int version, int errno, int queueDepth, int maxIoSize, int maxHdrSize, int flags) {
    public static final int SIZE = 56;
    /** RTRS_MSG_NEW_RKEY_F. (1 << 0, RTRS_MSG_NEED_INVAL_F, is a READ message flag.) */
    public static final int NEW_RKEY_F = 1 << 1;
    public static final int AUTH_F = 1 << 8;
    public static final int DNR_F = 1 << 9;
    public static final int EXT_F = 1 << 10;

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

    /** The server's chunk size as Linux's client computes it. */
    public int chunkSize() {
        return maxIoSize + maxHdrSize;
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

    public byte[] toBytes() {
        ByteBuffer b = ByteBuffer.allocate(SIZE);
        encode(b);
        return b.array();
    }

    /**
     * Reads the first 56 bytes of an accept's or reject's private data (an IB REP or REJ
     * carries more). As Linux's client (rtrs_rdma_conn_established), checks magic and major
     * version; the limits are checked only on an accept, where they matter.
     */
    public static ConRsp decode(ByteBuffer src) throws ProtoException {
        if (src.remaining() < SIZE) {
            // rtrs_rdma_conn_established: "Invalid RTRS connection response"
            throw new ProtoException(Errno.ECONNRESET, "CON_RSP: " + src.remaining() + " bytes of private data, need " + SIZE);
        }
        ByteBuffer b = Wire.take(src, SIZE, "CON_RSP");
        if (Wire.u16(b, 0) != Rtrs.MAGIC) {
            throw new ProtoException(Errno.ECONNRESET, "CON_RSP: bad magic");
        }
        int version = Wire.u16(b, 2);
        if (!Rtrs.compatible(version)) {
            throw new ProtoException(Errno.ECONNRESET, "CON_RSP: unsupported version 0x" + Integer.toHexString(version));
        }
        int err = b.getShort(4);
        if (err > 0 || err == Short.MIN_VALUE) {
            throw new ProtoException(Errno.ECONNRESET, "CON_RSP: errno " + err + " is not a negative errno");
        }
        int qd = Wire.u16(b, 6);
        int maxIo = b.getInt(8);
        int maxHdr = b.getInt(12);
        if (err == 0 && (qd == 0 || maxIo <= 0 || maxHdr <= 0 || maxHdr > Rtrs.MAX_PEER_HDR_SIZE
                || (long) maxIo + maxHdr > Integer.MAX_VALUE)) {
            throw new ProtoException(Errno.ECONNRESET, "CON_RSP: impossible limits qd=" + qd + " max_io=" + maxIo
                    + " max_hdr=" + maxHdr);
        }
        return new ConRsp(version, -err, qd, maxIo, maxHdr, b.getInt(16));
    }

    public static ConRsp decode(byte[] privateData) throws ProtoException {
        return decode(ByteBuffer.wrap(privateData));
    }
}

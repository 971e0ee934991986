package io.rnbd.rtrs.proto;

import io.rnbd.common.Errno;

/**
 * The 32-bit immediate field: bits 31..28 type, 27..0 payload (rtrs-pri.h).
 *
 * <p>IO_REQ payload: {@code buf_id << offBits | offset of the message in the chunk}, with
 * {@link #offsetBits(int)} derived from the queue depth so both sides agree. IO_RSP
 * payload: {@code (errno & 0x1ff) << 19 | (msg_id & 0x7ffff)}.
 */
public final class Imm {
    public static final int IO_REQ = 0;
    public static final int IO_RSP = 1;
    public static final int IO_RSP_W_INV = 2;
    public static final int HB_MSG = 8;
    public static final int HB_ACK = 9;

    public static final int TYPE_BITS = 4;
    public static final int PAYLOAD_BITS = 28;
    public static final int PAYLOAD_MASK = (1 << PAYLOAD_BITS) - 1;
    public static final int RSP_ERRNO_BITS = 9;
    public static final int RSP_ID_BITS = 19;
    public static final int RSP_ID_MASK = (1 << RSP_ID_BITS) - 1;
    public static final int RSP_ERRNO_MASK = (1 << RSP_ERRNO_BITS) - 1;

    private Imm() {
    }

    public static int of(int type, int payload) {
        if (type < 0 || type > 15 || (payload & ~PAYLOAD_MASK) != 0) {
            throw new IllegalArgumentException("imm type " + type + " payload " + payload);
        }
        return (type << PAYLOAD_BITS) | payload;
    }

    public static int type(int imm) {
        return imm >>> PAYLOAD_BITS;
    }

    public static int payload(int imm) {
        return imm & PAYLOAD_MASK;
    }

    /** The type of a received IMM, refusing types this protocol does not define. */
    public static int checkedType(int imm) throws ProtoException {
        int t = type(imm);
        if (t != IO_REQ && t != IO_RSP && t != IO_RSP_W_INV && t != HB_MSG && t != HB_ACK) {
            throw new ProtoException(Errno.EPROTO, "unknown imm type " + t);
        }
        return t;
    }

    /**
     * Offset bits of an IO_REQ payload: what the buffer id does not need. Linux computes the
     * id bits as {@code ilog2(queue_depth - 1) + 1} (alloc_permits, map_cont_bufs), and its
     * ilog2(0) is -1, so a queue depth of 1 leaves all 28 bits to the offset.
     */
    public static int offsetBits(int queueDepth) {
        if (queueDepth < 1 || queueDepth > Rtrs.MAX_SESS_QUEUE_DEPTH) {
            throw new IllegalArgumentException("queue depth " + queueDepth);
        }
        int idBits = 32 - Integer.numberOfLeadingZeros(queueDepth - 1);
        return PAYLOAD_BITS - idBits;
    }

    /** Whether chunks of {@code chunkSize} can be addressed at this queue depth. */
    public static boolean fits(int queueDepth, int chunkSize) {
        return chunkSize > 0 && (long) chunkSize <= (1L << offsetBits(queueDepth));
    }

    public static int ioReq(int bufId, int offset, int offBits) {
        if (offset < 0 || offset >= (1 << offBits) || bufId < 0 || bufId >= (1 << (PAYLOAD_BITS - offBits))) {
            throw new IllegalArgumentException("buf " + bufId + " offset " + offset);
        }
        return of(IO_REQ, (bufId << offBits) | offset);
    }

    public static int reqBufId(int imm, int offBits) {
        return payload(imm) >>> offBits;
    }

    public static int reqOffset(int imm, int offBits) {
        return payload(imm) & ((1 << offBits) - 1);
    }

    /**
     * IO_RSP for {@code msgId} with a positive errno, or IO_RSP_W_INV when the server
     * invalidated the client's read region (SEND_WITH_INV) before answering
     * (rtrs_to_io_rsp_imm).
     */
    public static int ioRsp(int msgId, int errno, boolean withInv) {
        if (msgId < 0 || msgId > RSP_ID_MASK) {
            throw new IllegalArgumentException("msg id " + msgId);
        }
        int e = Math.abs(errno) & RSP_ERRNO_MASK;
        return of(withInv ? IO_RSP_W_INV : IO_RSP, (e << RSP_ID_BITS) | msgId);
    }

    public static int rspMsgId(int imm) {
        return imm & RSP_ID_MASK;
    }

    public static int rspErrno(int imm) {
        return (payload(imm) >>> RSP_ID_BITS) & RSP_ERRNO_MASK;
    }

    public static int hbMsg() {
        return of(HB_MSG, 0);
    }

    public static int hbAck() {
        return of(HB_ACK, 0);
    }
}

package io.rnbd.rdma.soft.internal;

import io.rnbd.rdma.api.CmPrivateData;

import java.nio.ByteBuffer;

/**
 * The soft provider's frame header on the TCP stream (32 bytes, little-endian):
 *
 * <pre>
 *  0 u8  type        4 u32 payload length    8 u64 remote address (HELLO: magic)
 *  1 u8  status     16 u32 rkey (SEND_INV: the receiver's rkey to invalidate)
 *  2 u8  flags      20 u32 immediate
 *  3 u8  reserved (0)                       24 u32 aux (READ length, REJECT reason)
 *                                           28 u32 acked
 * </pre>
 *
 * Only the payload of HELLO, ACCEPT, REJECT, SEND*, WRITE* and READ_RESP follows a
 * header. The connection manager's private data is the payload of HELLO (the connect's,
 * at most {@link CmPrivateData#CONNECT_MAX} bytes), ACCEPT (the accept's, at most
 * {@link CmPrivateData#ACCEPT_MAX}) and REJECT (the reject's, at most
 * {@link CmPrivateData#REJECT_MAX}), the sizes the IB CM allows, so that a protocol that
 * runs on the soft provider fits a real adapter too; a longer one drops the connection.
 *
 * <p>Acknowledgements ride on every frame, as in TCP: {@code acked} counts the peer's
 * SEND and WRITE requests that arrived since the previous frame in this direction. An ACK
 * frame is a header with nothing else to say (or, with a status, a NAK for the request
 * after the acknowledged ones). A request flagged {@link #ACK_REQ} (as IB's BTH AckReq
 * bit: the initiator posted it signaled) must be acknowledged at once, by an ACK frame
 * if no answer leaves in the same write; the others are acknowledged by whatever frame
 * goes next, so an unsignaled request costs the target no write of its own.
 */
final class Wire {
    static final int HDR = 32;

    static final byte HELLO = 1;
    static final byte ACCEPT = 2;
    static final byte REJECT = 3;
    static final byte SEND = 4;
    static final byte SEND_IMM = 5;
    static final byte WRITE = 6;
    static final byte WRITE_IMM = 7;
    static final byte READ_REQ = 8;
    static final byte READ_RESP = 9;
    static final byte ACK = 10;
    static final byte DISCONNECT = 11;
    /** SEND_WITH_INV: a SEND whose receiver also invalidates the region under {@link #rkey}. */
    static final byte SEND_INV = 12;

    static final byte ST_OK = 0;
    static final byte ST_REM_ACCESS = 1;
    static final byte ST_REM_OP = 2;

    /** Flag: acknowledge this request at once (it completes signaled at the initiator). */
    static final byte ACK_REQ = 1;

    /**
     * "SOFT" and version 3, carried in HELLO's address field. Version 2 added acks on every
     * frame; 3 adds private data to ACCEPT and REJECT and the SEND_INV frame. A version-2
     * peer's HELLO is refused (its ACCEPT would be misread), so both ends must be upgraded.
     */
    static final long MAGIC = 0x534F_4654_0000_0003L;

    private Wire() {
    }

    static void put(ByteBuffer b, byte type, byte status, int len, long addr, int rkey, int imm, int aux) {
        put(b, type, status, (byte) 0, len, addr, rkey, imm, aux, 0);
    }

    static void put(ByteBuffer b, byte type, byte status, byte flags, int len, long addr, int rkey, int imm, int aux,
                    int acked) {
        int p = b.position();
        b.put(p, type);
        b.put(p + 1, status);
        b.put(p + 2, flags);
        b.put(p + 3, (byte) 0);
        b.putInt(p + 4, len);
        b.putLong(p + 8, addr);
        b.putInt(p + 16, rkey);
        b.putInt(p + 20, imm);
        b.putInt(p + 24, aux);
        b.putInt(p + 28, acked);
        b.position(p + HDR);
    }

    static byte type(ByteBuffer b, int p) {
        return b.get(p);
    }

    static byte status(ByteBuffer b, int p) {
        return b.get(p + 1);
    }

    static byte flags(ByteBuffer b, int p) {
        return b.get(p + 2);
    }

    static int len(ByteBuffer b, int p) {
        return b.getInt(p + 4);
    }

    static long addr(ByteBuffer b, int p) {
        return b.getLong(p + 8);
    }

    static int rkey(ByteBuffer b, int p) {
        return b.getInt(p + 16);
    }

    static int imm(ByteBuffer b, int p) {
        return b.getInt(p + 20);
    }

    static int aux(ByteBuffer b, int p) {
        return b.getInt(p + 24);
    }

    static int acked(ByteBuffer b, int p) {
        return b.getInt(p + 28);
    }

    /** Mark the acknowledgements of a received header as taken (it may be parsed again after a stall). */
    static void clearAcked(ByteBuffer b, int p) {
        b.putInt(p + 28, 0);
    }

    static boolean hasPayload(byte type) {
        return type == HELLO || type == ACCEPT || type == REJECT || type == SEND || type == SEND_IMM
                || type == SEND_INV || type == WRITE || type == WRITE_IMM || type == READ_RESP;
    }

    /** How much private data a connection-manager frame may carry; -1 for other frames. */
    static int maxPrivateData(byte type) {
        switch (type) {
            case HELLO: return CmPrivateData.CONNECT_MAX;
            case ACCEPT: return CmPrivateData.ACCEPT_MAX;
            case REJECT: return CmPrivateData.REJECT_MAX;
            default: return -1;
        }
    }
}

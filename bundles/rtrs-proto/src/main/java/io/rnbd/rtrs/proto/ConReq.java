package io.rnbd.rtrs.proto;

import io.rnbd.common.Errno;

import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.UUID;

/**
 * rtrs_msg_conn_req (rtrs-pri.h, Linux 6.1 and mainline), 56 bytes: the private data of
 * every connection's {@code rdma_connect} (rtrs_rdma_route_resolved).
 *
 * <pre>
 *  0 u8  __cma_version (0)      1 u8  __ip_version (0)     2 le16 magic 0x1BBD
 *  4 le16 version               6 le16 cid                 8 le16 cid_num
 * 10 le16 recon_cnt            12 uuid sess_uuid          28 uuid paths_uuid
 * 44 u8  bit 0 first_conn, bits 1..7 reserved_bits        45 u8[11] reserved
 * </pre>
 *
 * Despite their names, {@code sess_uuid} carries the PATH's UUID (the client copies
 * {@code clt_path->s.uuid}) and {@code paths_uuid} the SESSION's ({@code clt->paths_uuid}):
 * the server finds the session by paths_uuid and the path in it by sess_uuid.
 * {@code first_conn} says the server may create the session if it does not know it.
 * UUIDs are in uuid_t's byte order (RFC 4122).
 *
 * <p>Extension: {@link #EXT_F}, a reserved bit Linux never sets and its server never
 * reads, says the client speaks this appliance's extensions (authentication, FENCE). Only
 * then does the server offer them; a Linux client gets Linux's protocol.
 */
public record ConReq(int version, int cid, int cidNum, int reconCnt, UUID pathUuid, UUID sessionUuid,
                     boolean firstConn, boolean extensions) {
    public static final int SIZE = 56;
    /** Byte 44, bit 0 (first_conn). */
    public static final int FIRST_CONN_F = 1;
    /** Byte 44, bit 7 (of Linux's reserved_bits): the appliance's extensions. */
    public static final int EXT_F = 1 << 7;
    /** Linux's server refuses more connections per path than this (rtrs_rdma_connect). */
    public static final int MAX_CID_NUM = 4096;

    public ConReq {
        Objects.requireNonNull(pathUuid, "pathUuid");
        Objects.requireNonNull(sessionUuid, "sessionUuid");
        Wire.checkU16(version, "version");
        Wire.checkU16(cid, "cid");
        Wire.checkU16(cidNum, "cid_num");
        Wire.checkU16(reconCnt, "recon_cnt");
    }

    public ConReq(int cid, int cidNum, int reconCnt, UUID pathUuid, UUID sessionUuid, boolean firstConn,
                  boolean extensions) {
        this(Rtrs.VERSION, cid, cidNum, reconCnt, pathUuid, sessionUuid, firstConn, extensions);
    }

    public void encode(ByteBuffer dst) {
        ByteBuffer b = Wire.put(dst, SIZE);
        b.putShort(2, (short) Rtrs.MAGIC);
        b.putShort(4, (short) version);
        b.putShort(6, (short) cid);
        b.putShort(8, (short) cidNum);
        b.putShort(10, (short) reconCnt);
        Wire.putUuid(b, 12, pathUuid);
        Wire.putUuid(b, 28, sessionUuid);
        b.put(44, (byte) ((firstConn ? FIRST_CONN_F : 0) | (extensions ? EXT_F : 0)));
    }

    public byte[] toBytes() {
        ByteBuffer b = ByteBuffer.allocate(SIZE);
        encode(b);
        return b.array();
    }

    /**
     * Reads the first 56 bytes of a connect's private data (a provider may deliver the CM
     * message's whole private data field, more than was sent). As Linux's server, it checks
     * magic, major version and the connection ids, and ignores the bytes Linux reserves.
     */
    public static ConReq decode(ByteBuffer src) throws ProtoException {
        if (src.remaining() < SIZE) {
            // rtrs_rdma_connect: "Invalid RTRS connection request"
            throw new ProtoException(Errno.ECONNRESET, "CON_REQ: " + src.remaining() + " bytes of private data, need " + SIZE);
        }
        ByteBuffer b = Wire.take(src, SIZE, "CON_REQ");
        if (Wire.u16(b, 2) != Rtrs.MAGIC) {
            throw new ProtoException(Errno.ECONNRESET, "CON_REQ: bad magic");
        }
        int version = Wire.u16(b, 4);
        if (!Rtrs.compatible(version)) {
            throw new ProtoException(Errno.ECONNRESET, "CON_REQ: unsupported version 0x" + Integer.toHexString(version));
        }
        int cid = Wire.u16(b, 6);
        int cidNum = Wire.u16(b, 8);
        if (cidNum > MAX_CID_NUM) {
            throw new ProtoException(Errno.ECONNRESET, "CON_REQ: " + cidNum + " connections per path");
        }
        if (cid >= cidNum) {
            throw new ProtoException(Errno.ECONNRESET, "CON_REQ: cid " + cid + " of " + cidNum);
        }
        int bits = b.get(44) & 0xff;
        return new ConReq(version, cid, cidNum, Wire.u16(b, 10), Wire.getUuid(b, 12), Wire.getUuid(b, 28),
                (bits & FIRST_CONN_F) != 0, (bits & EXT_F) != 0);
    }

    public static ConReq decode(byte[] privateData) throws ProtoException {
        return decode(ByteBuffer.wrap(privateData));
    }
}

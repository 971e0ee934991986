package io.rnbd.rtrs.proto;

import io.rnbd.rdma.api.Errno;

import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.UUID;

/**
 * RTRS_MSG_CON_REQ (rtrs_msg_conn_req), 56 bytes, the first SEND on every new connection.
 *
 * <pre>
 *  0 u8  cma version (0)        1 u8  ip version (0)      2 u16 magic 0x1BBD
 *  4 u16 version                6 u16 cid                 8 u16 cid_num
 * 10 u16 recon_cnt             12 u8[16] sess_uuid       28 u8[16] paths_uuid
 * 44 u8  bit 0 first_conn, bits 1..7 reserved            45 u8[11] reserved
 * </pre>
 * UUIDs are stored in RFC 4122 byte order, as the kernel's uuid_t.
 */
public record ConReq(int version, int cid, int cidNum, int reconCnt, UUID sessUuid, UUID pathUuid,
                     boolean firstConn) {
    public static final int SIZE = 56;

    public ConReq {
        Objects.requireNonNull(sessUuid, "sessUuid");
        Objects.requireNonNull(pathUuid, "pathUuid");
        Wire.checkU16(version, "version");
        Wire.checkU16(cid, "cid");
        Wire.checkU16(cidNum, "cid_num");
        Wire.checkU16(reconCnt, "recon_cnt");
    }

    public ConReq(int cid, int cidNum, int reconCnt, UUID sessUuid, UUID pathUuid, boolean firstConn) {
        this(Rtrs.VERSION, cid, cidNum, reconCnt, sessUuid, pathUuid, firstConn);
    }

    public void encode(ByteBuffer dst) {
        ByteBuffer b = Wire.put(dst, SIZE);
        b.putShort(2, (short) Rtrs.MAGIC);
        b.putShort(4, (short) version);
        b.putShort(6, (short) cid);
        b.putShort(8, (short) cidNum);
        b.putShort(10, (short) reconCnt);
        Wire.putUuid(b, 12, sessUuid);
        Wire.putUuid(b, 28, pathUuid);
        b.put(44, (byte) (firstConn ? 1 : 0));
    }

    public static ConReq decode(ByteBuffer src) throws ProtoException {
        ByteBuffer b = Wire.take(src, SIZE, "CON_REQ");
        Wire.zeroes(b, 0, 2, "CON_REQ");
        if (Wire.u16(b, 2) != Rtrs.MAGIC) {
            throw new ProtoException(Errno.EPROTO, "CON_REQ: bad magic");
        }
        int version = Wire.u16(b, 4);
        if (!Rtrs.compatible(version)) {
            throw new ProtoException(Errno.EPROTONOSUPPORT, "CON_REQ: unsupported version 0x" + Integer.toHexString(version));
        }
        int cid = Wire.u16(b, 6);
        int cidNum = Wire.u16(b, 8);
        if (cidNum == 0 || cid >= cidNum) {
            throw new ProtoException(Errno.EINVAL, "CON_REQ: cid " + cid + " of " + cidNum);
        }
        int bits = b.get(44);
        if ((bits & ~1) != 0) {
            throw new ProtoException(Errno.EINVAL, "CON_REQ: reserved bits set");
        }
        Wire.zeroes(b, 45, SIZE, "CON_REQ");
        return new ConReq(version, cid, cidNum, Wire.u16(b, 10), Wire.getUuid(b, 12), Wire.getUuid(b, 28),
                (bits & 1) != 0);
    }
}

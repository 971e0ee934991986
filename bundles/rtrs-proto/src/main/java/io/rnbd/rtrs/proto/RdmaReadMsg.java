package io.rnbd.rtrs.proto;

import io.rnbd.common.Errno;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * RTRS_MSG_READ (rtrs_msg_rdma_read), after the user header in the chunk: where the
 * server is to RDMA-write the data.
 *
 * <pre>
 *  0 le16 type (3)   2 le16 usr_len   4 le16 flags (bit 0 NEED_INVAL)   6 le16 sg_cnt
 *  8 rtrs_sg_desc[sg_cnt]
 * </pre>
 */
public record RdmaReadMsg(int usrLen, int flags, List<SgDesc> descs) {
    public static final int HEADER_SIZE = 8;
    public static final int NEED_INVAL_F = 1;

    public RdmaReadMsg {
        Wire.checkU16(usrLen, "usr_len");
        Wire.checkU16(flags, "flags");
        descs = List.copyOf(descs);
        if (descs.size() > Rtrs.MAX_SEGMENTS) {
            throw new IllegalArgumentException("at most " + Rtrs.MAX_SEGMENTS + " descriptors");
        }
    }

    public boolean has(int flag) {
        return (flags & flag) != 0;
    }

    public static int size(int sgCnt) {
        return HEADER_SIZE + sgCnt * SgDesc.SIZE;
    }

    public int size() {
        return size(descs.size());
    }

    public void encode(ByteBuffer dst) {
        ByteBuffer b = Wire.put(dst, size());
        b.putShort(0, (short) MsgType.RDMA_READ.code());
        b.putShort(2, (short) usrLen);
        b.putShort(4, (short) flags);
        b.putShort(6, (short) descs.size());
        for (int i = 0; i < descs.size(); i++) {
            descs.get(i).encodeAt(b, HEADER_SIZE + i * SgDesc.SIZE);
        }
    }

    public static RdmaReadMsg decode(ByteBuffer src) throws ProtoException {
        ByteBuffer h = Wire.take(src.duplicate(), HEADER_SIZE, "RDMA_READ");
        Wire.expectType(h, MsgType.RDMA_READ);
        int flags = Wire.u16(h, 4);
        if ((flags & ~NEED_INVAL_F) != 0) {
            throw new ProtoException(Errno.EINVAL, "RDMA_READ: unknown flags 0x" + Integer.toHexString(flags));
        }
        int cnt = Wire.u16(h, 6);
        if (cnt > Rtrs.MAX_SEGMENTS) {
            throw new ProtoException(Errno.EINVAL, "RDMA_READ: sg_cnt " + cnt);
        }
        ByteBuffer b = Wire.take(src, size(cnt), "RDMA_READ");
        List<SgDesc> out = new ArrayList<>(cnt);
        for (int i = 0; i < cnt; i++) {
            out.add(SgDesc.decodeAt(b, HEADER_SIZE + i * SgDesc.SIZE, "RDMA_READ"));
        }
        return new RdmaReadMsg(Wire.u16(h, 2), flags, out);
    }
}

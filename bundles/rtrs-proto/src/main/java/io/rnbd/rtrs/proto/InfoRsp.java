package io.rnbd.rtrs.proto;

import io.rnbd.rdma.api.Errno;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * RTRS_MSG_INFO_RSP (rtrs_msg_info_rsp): the session's chunks, one descriptor per chunk in
 * buffer-id order.
 *
 * <pre>
 *  0 u16 type (1)   2 u16 sg_cnt   4 u8[4] reserved   8 rtrs_sg_desc[sg_cnt]
 * </pre>
 */
public record InfoRsp(List<SgDesc> descs) {
    public static final int HEADER_SIZE = 8;

    public InfoRsp {
        descs = List.copyOf(descs);
        if (descs.isEmpty() || descs.size() > Rtrs.MAX_SESS_QUEUE_DEPTH) {
            throw new IllegalArgumentException("sg_cnt must be 1.." + Rtrs.MAX_SESS_QUEUE_DEPTH);
        }
    }

    public static int size(int sgCnt) {
        return HEADER_SIZE + sgCnt * SgDesc.SIZE;
    }

    public int size() {
        return size(descs.size());
    }

    public void encode(ByteBuffer dst) {
        ByteBuffer b = Wire.put(dst, size());
        b.putShort(0, (short) MsgType.INFO_RSP.code());
        b.putShort(2, (short) descs.size());
        for (int i = 0; i < descs.size(); i++) {
            descs.get(i).encodeAt(b, HEADER_SIZE + i * SgDesc.SIZE);
        }
    }

    public static InfoRsp decode(ByteBuffer src) throws ProtoException {
        ByteBuffer h = Wire.take(src.duplicate(), HEADER_SIZE, "INFO_RSP");
        Wire.expectType(h, MsgType.INFO_RSP);
        int cnt = Wire.u16(h, 2);
        Wire.zeroes(h, 4, HEADER_SIZE, "INFO_RSP");
        if (cnt == 0) {
            throw new ProtoException(Errno.EINVAL, "INFO_RSP: no chunks");
        }
        ByteBuffer b = Wire.take(src, size(cnt), "INFO_RSP");
        List<SgDesc> out = new ArrayList<>(cnt);
        for (int i = 0; i < cnt; i++) {
            SgDesc d = SgDesc.decodeAt(b, HEADER_SIZE + i * SgDesc.SIZE, "INFO_RSP");
            if (d.len() == 0) {
                throw new ProtoException(Errno.EINVAL, "INFO_RSP: empty chunk " + i);
            }
            out.add(d);
        }
        return new InfoRsp(out);
    }
}

package io.rnbd.rtrs.proto;

import io.rnbd.common.Errno;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * rtrs_msg_info_rsp (rtrs-pri.h): where the session's chunks are, in buffer-id order. A
 * descriptor may cover several consecutive chunks: Linux's server with always_invalidate
 * off registers as many chunks per memory region as the adapter allows and sends one
 * descriptor per region; with it on, one per chunk. {@link #chunks} spreads them out as
 * Linux's client does (process_info_rsp).
 *
 * <pre>
 *  0 le16 type (1)   2 le16 sg_cnt   4 u8[4] reserved   8 rtrs_sg_desc[sg_cnt]
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

    /**
     * One descriptor per chunk: every descriptor's length must be a non-zero multiple of
     * {@code chunkSize}, the count must divide the queue depth, and together they must
     * cover exactly {@code queueDepth} chunks (Linux's checks, in process_info_rsp).
     */
    public List<SgDesc> chunks(int queueDepth, int chunkSize) throws ProtoException {
        if (queueDepth % descs.size() != 0) {
            throw new ProtoException(Errno.EINVAL, "INFO_RSP: " + descs.size() + " descriptors for " + queueDepth
                    + " chunks");
        }
        List<SgDesc> out = new ArrayList<>(queueDepth);
        for (SgDesc d : descs) {
            if (d.len() == 0 || d.len() % chunkSize != 0) {
                throw new ProtoException(Errno.EINVAL, "INFO_RSP: descriptor of " + d.len() + " bytes for chunks of "
                        + chunkSize);
            }
            for (int off = 0; off < d.len(); off += chunkSize) {
                if (out.size() == queueDepth) {
                    throw new ProtoException(Errno.EINVAL, "INFO_RSP: more than " + queueDepth + " chunks");
                }
                out.add(new SgDesc(d.addr() + off, d.key(), chunkSize));
            }
        }
        if (out.size() != queueDepth) {
            throw new ProtoException(Errno.EINVAL, "INFO_RSP: " + out.size() + " chunks, expected " + queueDepth);
        }
        return out;
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

package io.rnbd.rtrs.proto;

import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.UUID;

/**
 * Extension (not in the kernel): the client asks the server, on a healthy path's
 * connection 0, to fence another path of the same session before it resubmits that
 * path's writes. The server closes the fenced path, drops whatever of it has not
 * started, waits until every request of it the upper layer started has completed, and
 * only then answers with {@link FenceRsp}. {@code recon_cnt} names the instance of the
 * path (its CON_REQ recon_cnt): a newer instance of the same path is not touched, since
 * the server lets a path reconnect only after the old instance has drained. This is what keeps a resubmitted write from
 * being overtaken by its own stale copy.
 *
 * <pre>
 *  0 u16 type (6)   2 u16 recon_cnt of the fenced path instance   4 u32 fence_id
 *  8 u8[16] path_uuid
 * </pre>
 */
public record FenceReq(int fenceId, UUID pathUuid, int reconCnt) {
    public static final int SIZE = 24;

    public FenceReq {
        Objects.requireNonNull(pathUuid, "pathUuid");
        Wire.checkU16(reconCnt, "recon_cnt");
    }

    public void encode(ByteBuffer dst) {
        ByteBuffer b = Wire.put(dst, SIZE);
        b.putShort(0, (short) MsgType.FENCE_REQ.code());
        b.putShort(2, (short) reconCnt);
        b.putInt(4, fenceId);
        Wire.putUuid(b, 8, pathUuid);
    }

    public static FenceReq decode(ByteBuffer src) throws ProtoException {
        ByteBuffer b = Wire.take(src, SIZE, "FENCE_REQ");
        Wire.expectType(b, MsgType.FENCE_REQ);
        return new FenceReq(b.getInt(4), Wire.getUuid(b, 8), Wire.u16(b, 2));
    }
}

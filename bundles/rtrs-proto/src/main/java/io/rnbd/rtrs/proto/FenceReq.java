package io.rnbd.rtrs.proto;

import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.UUID;

/**
 * Extension (not in the kernel): the client asks the server, on a healthy path's
 * connection 0, to fence another path of the same session before it resubmits that
 * path's writes. The server closes the fenced path, drops whatever of it has not
 * started, waits until every request of it the upper layer started has completed, and
 * only then answers with {@link FenceRsp}. This is what keeps a resubmitted write from
 * being overtaken by its own stale copy.
 *
 * <pre>
 *  0 u16 type (6)   2 u16 reserved   4 u32 fence_id   8 u8[16] path_uuid
 * </pre>
 */
public record FenceReq(int fenceId, UUID pathUuid) {
    public static final int SIZE = 24;

    public FenceReq {
        Objects.requireNonNull(pathUuid, "pathUuid");
    }

    public void encode(ByteBuffer dst) {
        ByteBuffer b = Wire.put(dst, SIZE);
        b.putShort(0, (short) MsgType.FENCE_REQ.code());
        b.putInt(4, fenceId);
        Wire.putUuid(b, 8, pathUuid);
    }

    public static FenceReq decode(ByteBuffer src) throws ProtoException {
        ByteBuffer b = Wire.take(src, SIZE, "FENCE_REQ");
        Wire.expectType(b, MsgType.FENCE_REQ);
        Wire.zeroes(b, 2, 4, "FENCE_REQ");
        return new FenceReq(b.getInt(4), Wire.getUuid(b, 8));
    }
}

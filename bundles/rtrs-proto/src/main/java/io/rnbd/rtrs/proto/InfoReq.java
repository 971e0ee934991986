package io.rnbd.rtrs.proto;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * RTRS_MSG_INFO_REQ (rtrs_msg_info_req), 272 bytes, sent on connection 0 once every
 * connection of a path is up (and authenticated, where the server asks for it).
 *
 * <pre>
 *  0 u16 type (0)   2 u8[255] pathname (NUL padded)   257 u8[15] reserved
 * </pre>
 */
public record InfoReq(String pathName) {
    public static final int SIZE = 272;

    public InfoReq {
        Objects.requireNonNull(pathName, "pathName");
    }

    public void encode(ByteBuffer dst) {
        ByteBuffer b = Wire.put(dst, SIZE);
        b.putShort(0, (short) MsgType.INFO_REQ.code());
        Wire.putName(b, 2, pathName, Rtrs.NAME_MAX - 1, "pathname");
    }

    public static InfoReq decode(ByteBuffer src) throws ProtoException {
        ByteBuffer b = Wire.take(src, SIZE, "INFO_REQ");
        Wire.expectType(b, MsgType.INFO_REQ);
        // at most 254 characters and a NUL, as Linux's strscpy writes the field and our encoder
        // does: 255 without a NUL decoded, and could not be encoded again (found by Jazzer)
        String name = Wire.getName(b, 2, Rtrs.NAME_MAX - 1, "INFO_REQ pathname");
        Wire.zeroes(b, 2 + Rtrs.NAME_MAX - 1, SIZE, "INFO_REQ");
        return new InfoReq(name);
    }
}

package io.rnbd.rnbd.proto;

import java.nio.ByteBuffer;

/** rnbd_msg_sess_info_rsp, 36 B: header, version u8 @4 (the version both sides use), reserved[31]. */
public record SessInfoRsp(int version) implements RnbdMsg {
    public static final int SIZE = 36;

    public SessInfoRsp {
        Wire.checkU8("version", version);
    }

    @Override
    public MsgType type() {
        return MsgType.SESS_INFO_RSP;
    }

    @Override
    public void encode(ByteBuffer buf) {
        Wire.out(buf, MsgType.SESS_INFO_RSP).put(4, (byte) version);
    }

    public static SessInfoRsp decode(ByteBuffer buf) throws ProtoException {
        return new SessInfoRsp(Byte.toUnsignedInt(Wire.in(buf, MsgType.SESS_INFO_RSP).get(4)));
    }
}

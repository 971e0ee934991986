package io.rnbd.rnbd.proto;

import java.nio.ByteBuffer;

/** rnbd_msg_sess_info, 36 B: header, version u8 @4, reserved[31]. Client to server. */
public record SessInfo(int version) implements RnbdMsg {
    public static final int SIZE = 36;

    public SessInfo {
        Wire.checkU8("version", version);
    }

    @Override
    public MsgType type() {
        return MsgType.SESS_INFO;
    }

    @Override
    public void encode(ByteBuffer buf) {
        Wire.out(buf, MsgType.SESS_INFO).put(4, (byte) version);
    }

    public static SessInfo decode(ByteBuffer buf) throws ProtoException {
        return new SessInfo(Byte.toUnsignedInt(Wire.in(buf, MsgType.SESS_INFO).get(4)));
    }
}

package io.rnbd.rnbd.proto;

import java.nio.ByteBuffer;

/** rnbd_msg_close, 8 B: header, device id u32 @4. */
public record Close(int deviceId) implements RnbdMsg {
    public static final int SIZE = 8;

    @Override
    public MsgType type() {
        return MsgType.CLOSE;
    }

    @Override
    public void encode(ByteBuffer buf) {
        Wire.out(buf, MsgType.CLOSE).putInt(4, deviceId);
    }

    public static Close decode(ByteBuffer buf) throws ProtoException {
        return new Close(Wire.in(buf, MsgType.CLOSE).getInt(4));
    }
}

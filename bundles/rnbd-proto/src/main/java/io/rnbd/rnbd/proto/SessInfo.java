package io.rnbd.rnbd.proto;

import java.nio.ByteBuffer;

/**
 * rnbd_msg_sess_info, 36 B: header, version u8 @4, reserved[31]. Client to server.
 *
 * <p>Extension (the appliance's own, docs/protocol.md "Several servers"): bit 0 of the first
 * reserved byte (@5), {@link #EXT_HA}, says the client maps devices over several servers and
 * understands their roles; Linux's client leaves it 0, and a Linux server never answers it.
 *
 * @param ha the client speaks the several-servers extension
 */
public record SessInfo(int version, boolean ha) implements RnbdMsg {
    public static final int SIZE = 36;
    /** Offset of the extension flags: the first of the reserved bytes. */
    static final int EXT_OFFSET = 5;
    /** In the extension flags: the several-servers extension (both directions). */
    public static final int EXT_HA = 1;

    public SessInfo {
        Wire.checkU8("version", version);
    }

    /** A Linux client's SESS_INFO. */
    public SessInfo(int version) {
        this(version, false);
    }

    @Override
    public MsgType type() {
        return MsgType.SESS_INFO;
    }

    @Override
    public void encode(ByteBuffer buf) {
        ByteBuffer v = Wire.out(buf, MsgType.SESS_INFO).put(4, (byte) version);
        if (ha) {
            v.put(EXT_OFFSET, (byte) EXT_HA);
        }
    }

    /** Other bits of the reserved bytes are ignored, as Linux's server ignores them all. */
    public static SessInfo decode(ByteBuffer buf) throws ProtoException {
        ByteBuffer v = Wire.in(buf, MsgType.SESS_INFO);
        return new SessInfo(Byte.toUnsignedInt(v.get(4)), (v.get(EXT_OFFSET) & EXT_HA) != 0);
    }
}

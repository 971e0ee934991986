package io.rnbd.rnbd.proto;

import java.nio.ByteBuffer;

/**
 * rnbd_msg_sess_info_rsp, 36 B: header, version u8 @4 (the version both sides use), reserved[31].
 * Extension: {@link SessInfo#EXT_HA} in the first reserved byte (@5) when the client asked for it
 * and the server is an appliance; Linux's server leaves the reserved bytes 0.
 *
 * @param ha the server answers roles in OPEN_RSP and takes an OPEN's takeover flag
 */
public record SessInfoRsp(int version, boolean ha) implements RnbdMsg {
    public static final int SIZE = 36;

    public SessInfoRsp {
        Wire.checkU8("version", version);
    }

    /** A Linux server's answer. */
    public SessInfoRsp(int version) {
        this(version, false);
    }

    @Override
    public MsgType type() {
        return MsgType.SESS_INFO_RSP;
    }

    @Override
    public void encode(ByteBuffer buf) {
        ByteBuffer v = Wire.out(buf, MsgType.SESS_INFO_RSP).put(4, (byte) version);
        if (ha) {
            v.put(SessInfo.EXT_OFFSET, (byte) SessInfo.EXT_HA);
        }
    }

    public static SessInfoRsp decode(ByteBuffer buf) throws ProtoException {
        ByteBuffer v = Wire.in(buf, MsgType.SESS_INFO_RSP);
        return new SessInfoRsp(Byte.toUnsignedInt(v.get(4)), (v.get(SessInfo.EXT_OFFSET) & SessInfo.EXT_HA) != 0);
    }
}

package io.rnbd.rnbd.proto;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * rnbd_msg_open, 264 B: header, access mode u8 @4, resv1 @5, device name @6 (NAME_MAX = 255
 * bytes, NUL-terminated, so at most 254 bytes of UTF-8), reserved[3].
 *
 * <p>Extension: flags in resv1 for an export of several servers (docs/protocol.md), sent only
 * to a server whose SESS_INFO_RSP had {@link SessInfo#EXT_HA}: {@link #F_TAKEOVER} asks it to take
 * the storage over before answering, {@link #F_LEG} says this mapping is one of several to
 * different servers and finds the active one itself (a standby then answers its IO ENOLINK
 * instead of taking over at a write, as it does for a Linux host). Linux's client leaves resv1 0
 * and Linux's server ignores it; unknown bits are ignored here too.
 *
 * @param flags {@link #F_TAKEOVER} | {@link #F_LEG}
 */
public record Open(AccessMode accessMode, String deviceName, int flags) implements RnbdMsg {
    public static final int SIZE = 264;
    /** In resv1 (@5): take the storage over. */
    public static final int F_TAKEOVER = 1;
    /** In resv1 (@5): one of several mappings of the export, each to another server. */
    public static final int F_LEG = 2;
    static final int FLAGS_OFFSET = 5;
    public static final int NAME_OFFSET = 6;
    /** Bytes of the name field, the terminating NUL included. */
    public static final int NAME_FIELD = 255;
    public static final int NAME_MAX_BYTES = NAME_FIELD - 1;

    public Open {
        if (accessMode == null) {
            throw new IllegalArgumentException("access mode missing");
        }
        byte[] b = deviceName == null ? new byte[0] : deviceName.getBytes(StandardCharsets.UTF_8);
        if (b.length == 0 || b.length > NAME_MAX_BYTES || deviceName.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("device name must be 1.." + NAME_MAX_BYTES
                    + " bytes of UTF-8 without NUL");
        }
    }

    /** A Linux client's OPEN. */
    public Open(AccessMode accessMode, String deviceName) {
        this(accessMode, deviceName, 0);
    }

    public boolean takeover() {
        return (flags & F_TAKEOVER) != 0;
    }

    public boolean leg() {
        return (flags & F_LEG) != 0;
    }

    @Override
    public MsgType type() {
        return MsgType.OPEN;
    }

    @Override
    public void encode(ByteBuffer buf) {
        ByteBuffer v = Wire.out(buf, MsgType.OPEN);
        v.put(4, (byte) accessMode.wire());
        v.put(FLAGS_OFFSET, (byte) (flags & (F_TAKEOVER | F_LEG)));
        v.put(NAME_OFFSET, deviceName.getBytes(StandardCharsets.UTF_8));
    }

    public static Open decode(ByteBuffer buf) throws ProtoException {
        ByteBuffer v = Wire.in(buf, MsgType.OPEN);
        int mode = Byte.toUnsignedInt(v.get(4));
        if (mode > AccessMode.MIGRATION.wire()) {
            throw new ProtoException(Errno.EINVAL, "unknown access mode " + mode);
        }
        int len = 0;
        while (len < NAME_FIELD && v.get(NAME_OFFSET + len) != 0) {
            len++;
        }
        if (len == NAME_FIELD) {
            throw new ProtoException(Errno.EINVAL, "device name not NUL-terminated");
        }
        if (len == 0) {
            throw new ProtoException(Errno.EINVAL, "empty device name");
        }
        String name;
        try {
            name = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(v.slice(NAME_OFFSET, len)).toString();
        } catch (CharacterCodingException e) {
            throw new ProtoException(Errno.EINVAL, "device name is not UTF-8");
        }
        return new Open(AccessMode.fromWire(mode), name, v.get(FLAGS_OFFSET) & (F_TAKEOVER | F_LEG));
    }
}

package io.rnbd.rtrs.auth.chap.internal.msg;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.auth.chap.internal.ChapHash;
import io.rnbd.rtrs.auth.chap.internal.DhGroup;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * CHALLENGE, target → host: the chosen hash and DH group, a fresh challenge C1 with the
 * sequence number S1, the target's DH public value and the target's identity.
 * <pre>
 *  0 header (type 0x01)
 *  4 u8  hash id (1 SHA-256, 2 SHA-384, 3 SHA-512)
 *  5 u8  DH group id (0 null, 1..5 ffdhe2048..ffdhe8192)
 *  6 u8  hl, the hash length (32, 48, 64)
 *  7 u8  reserved
 *  8 u32 S1
 * 12 u16 DH value length (0 for null, else the group's prime size)
 * 14 u16 target id length (1..255)
 * 16 C1[hl], DH value, target id (UTF-8)
 * </pre>
 */
public record Challenge(int tid, ChapHash hash, DhGroup dhGroup, long s1, byte[] c1, byte[] dhValue, String targetId)
        implements ChapMessage {
    public static final int FIXED_SIZE = 16;

    @Override
    public int type() {
        return TYPE_CHALLENGE;
    }

    @Override
    public int size() {
        return FIXED_SIZE + c1.length + dhValue.length + targetId.getBytes(StandardCharsets.UTF_8).length;
    }

    @Override
    public void encodeBody(ByteBuffer b) {
        byte[] id = targetId.getBytes(StandardCharsets.UTF_8);
        b.put((byte) hash.id()).put((byte) dhGroup.id()).put((byte) c1.length).put((byte) 0);
        b.putInt((int) s1).putShort((short) dhValue.length).putShort((short) id.length);
        b.put(c1).put(dhValue).put(id);
    }

    static Challenge decodeBody(int tid, ByteBuffer b) throws AuthException {
        Wire.need(b, FIXED_SIZE - HEADER_SIZE, "CHALLENGE");
        int hashId = b.get() & 0xFF;
        int groupId = b.get() & 0xFF;
        int hl = b.get() & 0xFF;
        Wire.reserved(b.get(), "CHALLENGE");
        long s1 = b.getInt() & 0xFFFFFFFFL;
        int dhLen = b.getShort() & 0xFFFF;
        int idLen = b.getShort() & 0xFFFF;
        ChapHash hash = ChapHash.byId(hashId);
        DhGroup group = DhGroup.byId(groupId);
        if (hash == null || group == null) {
            throw new AuthException(Errno.EPROTO, "CHALLENGE selects unknown hash " + hashId + " or DH group " + groupId);
        }
        if (hl != hash.length()) {
            Wire.bad("CHALLENGE length " + hl + " does not match " + hash.configName());
        }
        if (dhLen != group.valueLength()) {
            Wire.bad("CHALLENGE DH value of " + dhLen + " bytes for " + group.configName());
        }
        if (idLen < 1 || idLen > 255) {
            Wire.bad("CHALLENGE target id length " + idLen + " outside 1..255");
        }
        byte[] c1 = Wire.bytes(b, hl, "CHALLENGE C1");
        byte[] dh = Wire.bytes(b, dhLen, "CHALLENGE DH value");
        String targetId = Wire.identity(Wire.bytes(b, idLen, "CHALLENGE target id"), "CHALLENGE target id");
        return new Challenge(tid, hash, group, s1, c1, dh, targetId);
    }
}

package io.rnbd.rtrs.proto;

import io.rnbd.common.Errno;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/** Little-endian cursor helpers shared by the records. */
final class Wire {
    private Wire() {
    }

    /** A little-endian view of exactly {@code size} bytes at the position; advances the source. */
    static ByteBuffer take(ByteBuffer src, int size, String what) throws ProtoException {
        if (src.remaining() < size) {
            throw new ProtoException(Errno.EBADMSG, what + ": " + src.remaining() + " bytes, need " + size);
        }
        ByteBuffer b = src.slice().limit(size).order(ByteOrder.LITTLE_ENDIAN);
        src.position(src.position() + size);
        return b;
    }

    /** A little-endian view for writing {@code size} bytes (zero-filled); advances the target. */
    static ByteBuffer put(ByteBuffer dst, int size) {
        if (dst.remaining() < size) {
            throw new IllegalArgumentException("buffer too small: " + dst.remaining() + " < " + size);
        }
        ByteBuffer b = dst.slice().limit(size).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < size; i++) {
            b.put(i, (byte) 0);
        }
        dst.position(dst.position() + size);
        return b;
    }

    static void putUuid(ByteBuffer b, int at, UUID u) {
        ByteBuffer be = b.duplicate().order(ByteOrder.BIG_ENDIAN);
        be.putLong(at, u.getMostSignificantBits());
        be.putLong(at + 8, u.getLeastSignificantBits());
    }

    static UUID getUuid(ByteBuffer b, int at) {
        ByteBuffer be = b.duplicate().order(ByteOrder.BIG_ENDIAN);
        return new UUID(be.getLong(at), be.getLong(at + 8));
    }

    static int u16(ByteBuffer b, int at) {
        return b.getShort(at) & 0xffff;
    }

    static long u32(ByteBuffer b, int at) {
        return b.getInt(at) & 0xffffffffL;
    }

    static void checkU16(int v, String what) {
        if (v < 0 || v > 0xffff) {
            throw new IllegalArgumentException(what + " out of u16 range: " + v);
        }
    }

    static void zeroes(ByteBuffer b, int from, int to, String what) throws ProtoException {
        for (int i = from; i < to; i++) {
            if (b.get(i) != 0) {
                throw new ProtoException(Errno.EINVAL, what + ": reserved byte " + i + " not zero");
            }
        }
    }

    /** A NUL-padded ASCII field; the string must leave room for nothing but fit {@code max}. */
    static void putName(ByteBuffer b, int at, String s, int max, String what) {
        byte[] bytes = s.getBytes(StandardCharsets.US_ASCII);
        if (bytes.length > max || !StandardCharsets.US_ASCII.newEncoder().canEncode(s)) {
            throw new IllegalArgumentException(what + " must be at most " + max + " ASCII bytes");
        }
        for (int i = 0; i < bytes.length; i++) {
            b.put(at + i, bytes[i]);
        }
    }

    static String getName(ByteBuffer b, int at, int max, String what) throws ProtoException {
        int n = 0;
        while (n < max && b.get(at + n) != 0) {
            byte c = b.get(at + n);
            if (c < 0x20 || c > 0x7e) {
                throw new ProtoException(Errno.EINVAL, what + ": non-printable byte");
            }
            n++;
        }
        zeroes(b, at + n, at + max, what + " padding");
        byte[] out = new byte[n];
        b.get(at, out);
        return new String(out, StandardCharsets.US_ASCII);
    }

    static void expectType(ByteBuffer b, MsgType t) throws ProtoException {
        int code = u16(b, 0);
        if (code != t.code()) {
            throw new ProtoException(Errno.EPROTO, "expected " + t + ", got type " + code);
        }
    }
}

package io.rnbd.rnbd.proto;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Framing shared by every record: bounds, header, zeroed reserved bytes. */
final class Wire {
    private Wire() {
    }

    /** A little-endian view of the next message of {@code type}; advances {@code buf} past it. */
    static ByteBuffer in(ByteBuffer buf, MsgType type) throws ProtoException {
        MsgType actual = MsgType.peek(buf);
        if (actual != type) {
            throw new ProtoException(Errno.EBADMSG, "expected " + type + ", got " + actual);
        }
        if (buf.remaining() < type.size()) {
            throw new ProtoException(Errno.EMSGSIZE,
                    type + " needs " + type.size() + " bytes, got " + buf.remaining());
        }
        ByteBuffer view = buf.slice().limit(type.size()).order(ByteOrder.LITTLE_ENDIAN);
        buf.position(buf.position() + type.size());
        return view;
    }

    /** A zero-filled little-endian view with the header written; advances {@code buf} past it. */
    static ByteBuffer out(ByteBuffer buf, MsgType type) {
        if (buf.remaining() < type.size()) {
            throw new java.nio.BufferOverflowException();
        }
        ByteBuffer view = buf.slice().limit(type.size()).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < type.size(); i++) {
            view.put(i, (byte) 0);
        }
        view.putShort(0, (short) type.wire());
        buf.position(buf.position() + type.size());
        return view;
    }

    static void checkU8(String field, int v) {
        if (v < 0 || v > 0xff) {
            throw new IllegalArgumentException(field + " out of u8 range: " + v);
        }
    }

    static void checkU16(String field, int v) {
        if (v < 0 || v > 0xffff) {
            throw new IllegalArgumentException(field + " out of u16 range: " + v);
        }
    }

    static void checkU32(String field, long v) {
        if (v < 0 || v > 0xffff_ffffL) {
            throw new IllegalArgumentException(field + " out of u32 range: " + v);
        }
    }

    static void checkNonNegative(String field, long v) {
        if (v < 0) {
            throw new IllegalArgumentException(field + " must not be negative: " + v);
        }
    }
}

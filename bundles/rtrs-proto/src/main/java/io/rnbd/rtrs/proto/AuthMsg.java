package io.rnbd.rtrs.proto;

import io.rnbd.common.Errno;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * Extension (not in the kernel): one step of session authentication on connection 0,
 * between CON_RSP (with {@link ConRsp#AUTH_F}) and INFO_REQ. The payload is the opaque
 * output of an {@code AuthExchange}; the server answers every client step; a non-zero
 * status ends the exchange and the connection.
 *
 * <pre>
 *  0 u16 type (5)   2 u16 status (positive errno, 0 = go on)   4 u8 flags   5 u8 reserved
 *  6 u16 data_len (at most 4096)   8 u8[16] method (ASCII, NUL padded, at most 15)
 * 24 u8[data_len] data
 * </pre>
 * Flags: {@link #FINAL_F} (the sender's side is done and accepts the peer),
 * {@link #DNR_F} (with a status: retrying cannot help).
 */
public record AuthMsg(String method, int status, int flags, byte[] data) {
    public static final int HEADER_SIZE = 24;
    public static final int MAX_DATA = 4096;
    public static final int MAX_SIZE = HEADER_SIZE + MAX_DATA;
    public static final int METHOD_MAX = 15;
    public static final int FINAL_F = 1;
    public static final int DNR_F = 2;

    public AuthMsg {
        Objects.requireNonNull(method, "method");
        data = data == null ? new byte[0] : data.clone();
        if (data.length > MAX_DATA) {
            throw new IllegalArgumentException("auth data above " + MAX_DATA + " bytes");
        }
        Wire.checkU16(status, "status");
        if ((flags & ~(FINAL_F | DNR_F)) != 0) {
            throw new IllegalArgumentException("unknown auth flags");
        }
    }

    public static AuthMsg step(String method, byte[] data, boolean fin) {
        return new AuthMsg(method, 0, fin ? FINAL_F : 0, data);
    }

    public static AuthMsg failure(String method, int errno, boolean doNotRetry) {
        return new AuthMsg(method, errno, doNotRetry ? DNR_F : 0, new byte[0]);
    }

    @Override
    public byte[] data() {
        return data.clone();
    }

    public boolean has(int flag) {
        return (flags & flag) != 0;
    }

    public int size() {
        return HEADER_SIZE + data.length;
    }

    public void encode(ByteBuffer dst) {
        ByteBuffer b = Wire.put(dst, size());
        b.putShort(0, (short) MsgType.AUTH.code());
        b.putShort(2, (short) status);
        b.put(4, (byte) flags);
        b.putShort(6, (short) data.length);
        Wire.putName(b, 8, method, METHOD_MAX, "auth method");
        b.put(HEADER_SIZE, data);
    }

    public static AuthMsg decode(ByteBuffer src) throws ProtoException {
        ByteBuffer h = Wire.take(src.duplicate(), HEADER_SIZE, "AUTH");
        Wire.expectType(h, MsgType.AUTH);
        int flags = h.get(4) & 0xff;
        if ((flags & ~(FINAL_F | DNR_F)) != 0) {
            throw new ProtoException(Errno.EINVAL, "AUTH: unknown flags");
        }
        Wire.zeroes(h, 5, 6, "AUTH");
        int len = Wire.u16(h, 6);
        if (len > MAX_DATA) {
            throw new ProtoException(Errno.EMSGSIZE, "AUTH: data_len " + len);
        }
        // at most 15 characters and a NUL: a 16-character name is one no encoder writes (the
        // fuzzer's first finding: it decoded, and re-encoding it threw)
        String method = Wire.getName(h, 8, METHOD_MAX, "AUTH method");
        Wire.zeroes(h, 8 + METHOD_MAX, HEADER_SIZE, "AUTH method terminator");
        ByteBuffer b = Wire.take(src, HEADER_SIZE + len, "AUTH");
        byte[] data = new byte[len];
        b.get(HEADER_SIZE, data);
        return new AuthMsg(method, Wire.u16(h, 2), flags, data);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AuthMsg m && m.method.equals(method) && m.status == status && m.flags == flags
                && java.util.Arrays.equals(m.data, data);
    }

    @Override
    public int hashCode() {
        return Objects.hash(method, status, flags, java.util.Arrays.hashCode(data));
    }

    @Override
    public String toString() {
        return "AuthMsg[method=" + method + ", status=" + status + ", flags=" + flags + ", len=" + data.length + "]";
    }
}

package io.rnbd.rtrs.proto;

import io.rnbd.common.Errno;

import java.nio.ByteBuffer;

/**
 * rtrs_sg_desc, 16 bytes: {@code 0 u64 addr, 8 u32 key, 12 u32 len}.
 * {@code len} is unsigned on the wire; lengths above 2 GiB are refused as impossible.
 */
public record SgDesc(long addr, int key, int len) {
    public static final int SIZE = 16;

    public SgDesc {
        if (len < 0) {
            throw new IllegalArgumentException("negative length");
        }
    }

    void encodeAt(ByteBuffer b, int at) {
        b.putLong(at, addr);
        b.putInt(at + 8, key);
        b.putInt(at + 12, len);
    }

    static SgDesc decodeAt(ByteBuffer b, int at, String what) throws ProtoException {
        int len = b.getInt(at + 12);
        if (len < 0) {
            throw new ProtoException(Errno.EINVAL, what + ": descriptor length " + Integer.toUnsignedString(len));
        }
        return new SgDesc(b.getLong(at), b.getInt(at + 8), len);
    }
}

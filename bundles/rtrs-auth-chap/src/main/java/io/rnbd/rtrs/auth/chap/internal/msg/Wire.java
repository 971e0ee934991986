package io.rnbd.rtrs.auth.chap.internal.msg;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.auth.chap.internal.HostIds;
import java.nio.ByteBuffer;

/** Bounds-checked reads: a short message is EBADMSG, not a BufferUnderflowException. */
final class Wire {
    private Wire() {
    }

    static void need(ByteBuffer b, int n, String what) throws AuthException {
        if (n < 0 || b.remaining() < n) {
            throw new AuthException(Errno.EBADMSG, "CHAP message truncated in " + what);
        }
    }

    static int u8(ByteBuffer b) throws AuthException {
        need(b, 1, "header");
        return b.get() & 0xFF;
    }

    static int u16(ByteBuffer b) throws AuthException {
        need(b, 2, "header");
        return b.getShort() & 0xFFFF;
    }

    static byte[] bytes(ByteBuffer b, int n, String what) throws AuthException {
        need(b, n, what);
        byte[] out = new byte[n];
        b.get(out);
        return out;
    }

    static void reserved(int value, String what) throws AuthException {
        if (value != 0) {
            throw new AuthException(Errno.EBADMSG, "non-zero reserved field in " + what);
        }
    }

    static void bad(String why) throws AuthException {
        throw new AuthException(Errno.EBADMSG, why);
    }

    static String identity(byte[] raw, String what) throws AuthException {
        String s = HostIds.decode(raw);
        if (s == null) {
            bad(what + " is not a valid identity");
        }
        return s;
    }
}

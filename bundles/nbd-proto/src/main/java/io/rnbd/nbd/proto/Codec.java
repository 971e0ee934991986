package io.rnbd.nbd.proto;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** Shared checks and string handling of the records. */
final class Codec {
    /** Bigger option payloads are refused (a name is at most 4 KiB; GO adds a short list). */
    static final int MAX_OPTION_DATA = 64 * 1024;

    private Codec() {
    }

    static void need(ByteBuffer buf, int n, String what) throws NbdProtoException {
        if (buf.remaining() < n) {
            throw new NbdProtoException(Errno.EBADMSG, what + " needs " + n + " bytes, got " + buf.remaining());
        }
    }

    static String string(ByteBuffer buf, int len, String what) throws NbdProtoException {
        if (len < 0 || len > NbdConstants.MAX_STRING) {
            throw new NbdProtoException(Errno.EMSGSIZE, what + " of " + Integer.toUnsignedString(len) + " bytes");
        }
        need(buf, len, what);
        ByteBuffer slice = buf.slice(buf.position(), len);
        buf.position(buf.position() + len);
        try {
            String s = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(slice).toString();
            if (s.indexOf('\0') >= 0) {
                throw new NbdProtoException(Errno.EINVAL, what + " contains NUL");
            }
            return s;
        } catch (CharacterCodingException e) {
            throw new NbdProtoException(Errno.EINVAL, what + " is not UTF-8");
        }
    }

    static byte[] utf8(String s, String what) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length > NbdConstants.MAX_STRING) {
            throw new IllegalArgumentException(what + " longer than " + NbdConstants.MAX_STRING + " bytes");
        }
        return b;
    }

    static void checkTransmission(long size, int flags) throws NbdProtoException {
        if (size < 0) {
            throw new NbdProtoException(Errno.EOVERFLOW, "export size beyond 2^63");
        }
        if ((flags & NbdConstants.FLAG_HAS_FLAGS) == 0) {
            throw new NbdProtoException(Errno.EPROTO, "transmission flags without NBD_FLAG_HAS_FLAGS");
        }
    }
}

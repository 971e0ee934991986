package io.rnbd.rtrs.auth.chap.internal;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** Host and target identities: 1..255 bytes of UTF-8, no whitespace, control characters or '='. */
public final class HostIds {
    public static final int MAX_BYTES = 255;

    private HostIds() {
    }

    /** @return null if valid, else what is wrong (without echoing the id) */
    public static String problem(String id) {
        if (id == null || id.isEmpty()) {
            return "identity is empty";
        }
        if (id.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
            return "identity is longer than " + MAX_BYTES + " bytes";
        }
        if (!StandardCharsets.UTF_8.newEncoder().canEncode(id)) {
            return "identity is not valid Unicode";
        }
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (Character.isWhitespace(c) || Character.isISOControl(c) || c == '=') {
                return "identity contains whitespace, a control character or '='";
            }
        }
        return null;
    }

    /** Strict UTF-8 decoding of wire bytes; null if not valid UTF-8 or not a valid identity. */
    public static String decode(byte[] bytes) {
        try {
            String s = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
            return problem(s) == null ? s : null;
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}

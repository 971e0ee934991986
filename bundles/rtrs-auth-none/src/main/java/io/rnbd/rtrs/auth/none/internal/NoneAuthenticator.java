package io.rnbd.rtrs.auth.none.internal;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.api.AuthExchange;
import io.rnbd.rtrs.api.Authenticator;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The explicit "no authentication" choice ({@code rtrs.auth=none}): one message from the
 * host carrying its claimed identity, accepted as is.
 * <pre>
 *  0 u8  type 0x4E ('N')
 *  1 u8  version (1)
 *  2 u16 host id length (1..255), little-endian
 *  4 host id (UTF-8, no whitespace or control characters)
 * </pre>
 */
public class NoneAuthenticator implements Authenticator {
    public static final String METHOD = "none";
    static final int TYPE = 0x4E;
    static final int VERSION = 1;
    static final int HEADER_SIZE = 4;
    static final int MAX_ID_BYTES = 255;

    @Override
    public String method() {
        return METHOD;
    }

    @Override
    public AuthExchange initiate(String hostId) throws AuthException {
        String problem = problem(hostId);
        if (problem != null) {
            throw new AuthException(Errno.EINVAL, "host id: " + problem);
        }
        return new HostSide(hostId);
    }

    @Override
    public AuthExchange respond() {
        return new TargetSide();
    }

    static byte[] encode(String hostId) {
        byte[] id = hostId.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(HEADER_SIZE + id.length).order(ByteOrder.LITTLE_ENDIAN)
                .put((byte) TYPE).put((byte) VERSION).putShort((short) id.length).put(id).array();
    }

    static String decode(byte[] msg) throws AuthException {
        if (msg == null || msg.length < HEADER_SIZE) {
            throw new AuthException(Errno.EBADMSG, "auth message shorter than its header");
        }
        ByteBuffer b = ByteBuffer.wrap(msg).order(ByteOrder.LITTLE_ENDIAN);
        int type = b.get() & 0xFF;
        int version = b.get() & 0xFF;
        int len = b.getShort() & 0xFFFF;
        if (type != TYPE || version != VERSION) {
            throw new AuthException(Errno.EPROTO, "not a 'none' auth message (type " + type + ", version " + version + ")");
        }
        if (len < 1 || len > MAX_ID_BYTES || len != b.remaining()) {
            throw new AuthException(Errno.EBADMSG, "host id length " + len + " with " + b.remaining() + " bytes present");
        }
        String id;
        try {
            id = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(b).toString();
        } catch (CharacterCodingException e) {
            throw new AuthException(Errno.EBADMSG, "host id is not valid UTF-8");
        }
        String problem = problem(id);
        if (problem != null) {
            throw new AuthException(Errno.EBADMSG, "host id: " + problem);
        }
        return id;
    }

    static String problem(String id) {
        if (id == null || id.isEmpty()) {
            return "empty";
        }
        if (!StandardCharsets.UTF_8.newEncoder().canEncode(id) || id.getBytes(StandardCharsets.UTF_8).length > MAX_ID_BYTES) {
            return "not valid Unicode or longer than " + MAX_ID_BYTES + " bytes";
        }
        if (id.chars().anyMatch(c -> Character.isWhitespace(c) || Character.isISOControl(c))) {
            return "contains whitespace or a control character";
        }
        return null;
    }

    /** Sends the identity once and is done: nothing to prove. */
    private static final class HostSide implements AuthExchange {
        private final String hostId;
        private boolean sent;

        HostSide(String hostId) {
            this.hostId = hostId;
        }

        @Override
        public synchronized byte[] step(byte[] peerMessage) throws AuthException {
            if (sent || (peerMessage != null && peerMessage.length != 0)) {
                throw new AuthException(Errno.EPROTO, "'none' auth expects no message from the target");
            }
            sent = true;
            return encode(hostId);
        }

        @Override
        public synchronized boolean done() {
            return sent;
        }

        @Override
        public String peerId() {
            return "";
        }
    }

    /** Accepts the claimed identity of one well-formed message. */
    private static final class TargetSide implements AuthExchange {
        private String hostId;

        @Override
        public synchronized byte[] step(byte[] peerMessage) throws AuthException {
            if (hostId != null) {
                throw new AuthException(Errno.EPROTO, "'none' auth exchange already finished");
            }
            hostId = decode(peerMessage);
            return null;
        }

        @Override
        public synchronized boolean done() {
            return hostId != null;
        }

        @Override
        public synchronized String peerId() {
            return hostId == null ? "" : hostId;
        }
    }
}

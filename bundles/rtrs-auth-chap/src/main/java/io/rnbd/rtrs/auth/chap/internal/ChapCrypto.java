package io.rnbd.rtrs.auth.chap.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The DH-HMAC-CHAP computations, as NVMe defines them (TP 8006; Linux
 * drivers/nvme/host/auth.c and drivers/nvme/common/auth.c):
 * <pre>
 * Ca = C                                   null DH group
 * Ca = HMAC-H(H(g^xy mod p), C)            otherwise (the "augmented challenge")
 * R1 = HMAC-H(Kh', Ca1 || le32 S1 || le16 T_ID || 0x00 || "HostHost"   || hostId   || 0x00 || targetId)
 * R2 = HMAC-H(Kc', Ca2 || le32 S2 || le16 T_ID || 0x00 || "Controller" || targetId || 0x00 || hostId)
 * </pre>
 * where Kh' is the host key transformed with the host id and Kc' the controller key
 * transformed with the target id ({@link DhchapKey#transformed(String)}), H the negotiated hash.
 */
final class ChapCrypto {
    private static final byte[] HOST_LABEL = "HostHost".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CTRL_LABEL = "Controller".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ZERO = {0};

    private ChapCrypto() {
    }

    static byte[] augment(ChapHash h, byte[] sharedSecret, byte[] challenge) {
        if (sharedSecret == null) {
            return challenge;
        }
        return h.hmac(h.digest(sharedSecret), challenge);
    }

    static byte[] hostResponse(ChapHash h, byte[] hostKey, byte[] ca1, long s1, int tid, String hostId, String targetId) {
        return response(h, hostKey, ca1, s1, tid, HOST_LABEL, hostId, targetId);
    }

    static byte[] ctrlResponse(ChapHash h, byte[] ctrlKey, byte[] ca2, long s2, int tid, String targetId, String hostId) {
        return response(h, ctrlKey, ca2, s2, tid, CTRL_LABEL, targetId, hostId);
    }

    private static byte[] response(ChapHash h, byte[] key, byte[] ca, long seq, int tid, byte[] label,
                                   String first, String second) {
        byte[] seqTid = ByteBuffer.allocate(6).order(ByteOrder.LITTLE_ENDIAN)
                .putInt((int) seq).putShort((short) tid).array();
        return h.hmac(key, ca, seqTid, ZERO, label, first.getBytes(StandardCharsets.UTF_8), ZERO,
                second.getBytes(StandardCharsets.UTF_8));
    }
}

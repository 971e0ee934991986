package io.rnbd.rtrs.auth.chap.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rtrs.api.AuthExchange;
import io.rnbd.rtrs.auth.chap.internal.msg.Challenge;
import io.rnbd.rtrs.auth.chap.internal.msg.ChapMessage;
import io.rnbd.rtrs.auth.chap.internal.msg.Negotiate;
import io.rnbd.rtrs.auth.chap.internal.msg.Reply;
import io.rnbd.rtrs.auth.chap.internal.msg.Success1;
import io.rnbd.rtrs.auth.chap.internal.msg.Success2;
import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * The test plays the target by hand and checks the host's R1 (and the R2 the host accepts)
 * against a computation written here with javax.crypto directly, following NVMe's formulas.
 */
class IndependentResponseTest {
    private static final String HOST = "host-x";
    private static final String TARGET = "target-y";
    private final SecureRandom rnd = new SecureRandom();

    @Test
    void nullGroupSha256() throws Exception {
        check(ChapHash.SHA256, DhGroup.NULL, 1);
    }

    @Test
    void ffdhe2048Sha512() throws Exception {
        check(ChapHash.SHA512, DhGroup.FFDHE2048, 3);
    }

    @Test
    void ffdhe3072Sha384UntransformedKey() throws Exception {
        check(ChapHash.SHA384, DhGroup.FFDHE3072, 0);
    }

    private void check(ChapHash hash, DhGroup group, int transform) throws Exception {
        String hostSecret = Chaps.secret(transform, 32);
        String ctrlSecret = Chaps.secret(2, 48);
        ChapAuthenticator host = Chaps.auth(Chaps.store(HOST, hostSecret, ctrlSecret), Chaps.settings("h", hash, group));
        AuthExchange h = host.initiate(HOST);
        Negotiate neg = (Negotiate) ChapMessage.decode(h.step(new byte[0]));

        byte[] c1 = new byte[hash.length()];
        rnd.nextBytes(c1);
        long s1 = 0x01020304L;
        BigInteger p = group.prime();
        BigInteger xt = new BigInteger(256, rnd);
        byte[] targetPublic = p == null ? new byte[0] : pad(BigInteger.TWO.modPow(xt, p), group.valueLength());
        byte[] challenge = new Challenge(neg.tid(), hash, group, s1, c1, targetPublic, TARGET).toBytes();
        Reply reply = (Reply) ChapMessage.decode(h.step(challenge));

        String mac = "Hmac" + hash.name();
        String digest = hash.name().replace("SHA", "SHA-");
        byte[] sk = p == null ? null : pad(new BigInteger(1, reply.dhValue()).modPow(xt, p), group.valueLength());
        byte[] ca1 = sk == null ? c1 : hmac(mac, MessageDigest.getInstance(digest).digest(sk), c1);
        byte[] kh = transformKey(hostSecret, HOST);
        byte[] expectedR1 = hmac(mac, kh, ca1, le32(s1), le16(neg.tid()), new byte[1],
                "HostHost".getBytes(StandardCharsets.US_ASCII), HOST.getBytes(StandardCharsets.UTF_8), new byte[1],
                TARGET.getBytes(StandardCharsets.UTF_8));
        assertArrayEquals(expectedR1, reply.r1());

        assertTrue(reply.bidirectional());
        byte[] ca2 = sk == null ? reply.c2() : hmac(mac, MessageDigest.getInstance(digest).digest(sk), reply.c2());
        byte[] r2 = hmac(mac, transformKey(ctrlSecret, TARGET), ca2, le32(reply.s2()), le16(neg.tid()), new byte[1],
                "Controller".getBytes(StandardCharsets.US_ASCII), TARGET.getBytes(StandardCharsets.UTF_8), new byte[1],
                HOST.getBytes(StandardCharsets.UTF_8));
        byte[] last = h.step(new Success1(neg.tid(), r2).toBytes());
        assertNotNull(last);
        assertEquals(new Success2(neg.tid()), ChapMessage.decode(last));
        assertTrue(h.done());
        assertEquals(TARGET, h.peerId());
    }

    private static byte[] transformKey(String secret, String identity) throws Exception {
        int hh = Integer.parseInt(secret.substring(7, 9));
        byte[] raw = Base64.getDecoder().decode(secret.substring(10, secret.length() - 1));
        byte[] key = Arrays.copyOf(raw, raw.length - 4);
        if (hh == 0) {
            return key;
        }
        String alg = new String[] {null, "HmacSHA256", "HmacSHA384", "HmacSHA512"}[hh];
        return hmac(alg, key, identity.getBytes(StandardCharsets.UTF_8),
                "NVMe-over-Fabrics".getBytes(StandardCharsets.US_ASCII));
    }

    private static byte[] hmac(String alg, byte[] key, byte[]... parts) throws Exception {
        Mac m = Mac.getInstance(alg);
        m.init(new SecretKeySpec(key, alg));
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            all.write(p);
        }
        return m.doFinal(all.toByteArray());
    }

    private static byte[] le32(long v) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt((int) v).array();
    }

    private static byte[] le16(int v) {
        return ByteBuffer.allocate(2).order(ByteOrder.LITTLE_ENDIAN).putShort((short) v).array();
    }

    private static byte[] pad(BigInteger v, int len) {
        byte[] raw = v.toByteArray();
        byte[] out = new byte[len];
        int copy = Math.min(raw.length, len);
        System.arraycopy(raw, raw.length - copy, out, len - copy, copy);
        return out;
    }
}

package io.rnbd.rtrs.auth.chap.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.AuthException;
import java.math.BigInteger;
import java.security.SecureRandom;
import org.junit.jupiter.api.Test;

class DhGroupTest {
    private static final BigInteger ONES64 = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

    @Test
    void primesHaveTheRfc7919Shape() {
        // RFC 7919: p = 2^b - 2^{b-64} + {[2^{b-130} e] + X} * 2^64 - 1: top and bottom 64 bits all ones
        String[] tails = {"886b423861285c97", "3fd59d7c25e41d2b66c62e37", "c68a007e5e655f6a",
                "a40e329cd0e40e65", "d68c8bb7c5c6424c"};
        int[] bits = {2048, 3072, 4096, 6144, 8192};
        DhGroup[] groups = {DhGroup.FFDHE2048, DhGroup.FFDHE3072, DhGroup.FFDHE4096, DhGroup.FFDHE6144, DhGroup.FFDHE8192};
        for (int i = 0; i < groups.length; i++) {
            BigInteger p = groups[i].prime();
            assertEquals(bits[i], p.bitLength(), groups[i].configName());
            assertEquals(bits[i] / 8, groups[i].valueLength());
            assertEquals(ONES64, p.and(ONES64));
            assertEquals(ONES64, p.shiftRight(bits[i] - 64));
            String hex = p.toString(16);
            assertTrue(hex.startsWith("ffffffffffffffffadf85458a2bb4a9aafdc5620273d3cf1"), groups[i].configName());
            assertTrue(hex.endsWith(tails[i] + "ffffffffffffffff"), groups[i].configName());
        }
    }

    @Test
    void smallGroupsAreSafePrimes() {
        for (DhGroup g : new DhGroup[] {DhGroup.FFDHE2048, DhGroup.FFDHE3072}) {
            BigInteger p = g.prime();
            assertTrue(p.isProbablePrime(20));
            assertTrue(p.subtract(BigInteger.ONE).shiftRight(1).isProbablePrime(20));
        }
    }

    @Test
    void bothSidesAgree() throws AuthException {
        SecureRandom rnd = new SecureRandom();
        for (DhGroup g : new DhGroup[] {DhGroup.FFDHE2048, DhGroup.FFDHE4096}) {
            BigInteger a = g.newPrivate(rnd);
            BigInteger b = g.newPrivate(rnd);
            byte[] ab = g.sharedSecret(a, g.publicValue(b));
            assertArrayEquals(ab, g.sharedSecret(b, g.publicValue(a)));
            assertEquals(g.valueLength(), ab.length);
            assertEquals(g.valueLength(), g.publicValue(a).length);
        }
    }

    @Test
    void degenerateOrMisSizedPeerValuesAreRejected() {
        DhGroup g = DhGroup.FFDHE2048;
        BigInteger x = g.newPrivate(new SecureRandom());
        BigInteger p = g.prime();
        for (BigInteger bad : new BigInteger[] {BigInteger.ZERO, BigInteger.ONE, p.subtract(BigInteger.ONE), p}) {
            byte[] v = fixed(bad, g.valueLength());
            assertEquals(Errno.EBADMSG, assertThrows(AuthException.class, () -> g.sharedSecret(x, v)).errno());
        }
        assertEquals(Errno.EBADMSG, assertThrows(AuthException.class, () -> g.sharedSecret(x, new byte[255])).errno());
    }

    @Test
    void namesAndIds() {
        assertEquals(DhGroup.FFDHE6144, DhGroup.byName(" FFDHE6144 "));
        assertEquals(DhGroup.NULL, DhGroup.byId(0));
        assertEquals(null, DhGroup.byId(6));
        assertThrows(IllegalArgumentException.class, () -> DhGroup.byName("modp2048"));
        assertEquals(ChapHash.SHA384, ChapHash.byName("hmac(sha384)"));
        assertEquals(ChapHash.SHA256, ChapHash.byName("SHA-256"));
        assertThrows(IllegalArgumentException.class, () -> ChapHash.byName("md5"));
    }

    private static byte[] fixed(BigInteger v, int len) {
        byte[] raw = v.toByteArray();
        byte[] out = new byte[len];
        int copy = Math.min(raw.length, len);
        System.arraycopy(raw, raw.length - copy, out, len - copy, copy);
        return out;
    }
}

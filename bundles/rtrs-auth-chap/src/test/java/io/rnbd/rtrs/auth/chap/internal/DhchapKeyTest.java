package io.rnbd.rtrs.auth.chap.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rtrs.auth.chap.api.ChapSecrets;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.zip.CRC32;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

class DhchapKeyTest {

    private static String secretOf(String hh, byte[] raw) {
        return "DHHC-1:" + hh + ":" + Base64.getEncoder().encodeToString(raw) + ":";
    }

    private static byte[] withCrc(byte[] key) {
        CRC32 crc = new CRC32();
        crc.update(key);
        return ByteBuffer.allocate(key.length + 4).order(ByteOrder.LITTLE_ENDIAN).put(key).putInt((int) crc.getValue()).array();
    }

    @Test
    void parsesEveryTransformAndLength() throws Exception {
        for (int hh = 0; hh <= 3; hh++) {
            for (int len : new int[] {32, 48, 64}) {
                DhchapKey k = DhchapKey.parse(ChapSecrets.generate(hh, len));
                assertEquals(hh, k.transform());
                assertEquals(len, k.length());
            }
        }
    }

    @Test
    void acceptsSurroundingWhitespace() throws Exception {
        assertEquals(32, DhchapKey.parse("  " + ChapSecrets.generate(1, 32) + "\n").length());
    }

    @Test
    void encodedRoundTrips() throws Exception {
        String s = ChapSecrets.generate(2, 48);
        assertEquals(s, DhchapKey.parse(s).encoded());
    }

    @Test
    void badCrcIsRejectedWithoutEchoingTheSecret() {
        byte[] raw = withCrc(new byte[32]);
        raw[33] ^= 1;
        String bad = secretOf("01", raw);
        ChapKeyException e = assertThrows(ChapKeyException.class, () -> DhchapKey.parse(bad));
        assertTrue(e.getMessage().contains("CRC"), e.getMessage());
        assertNoLeak(bad, e.getMessage());
    }

    @Test
    void badLengthIsRejected() {
        for (int len : new int[] {16, 31, 33, 47, 65, 0}) {
            String bad = secretOf("00", withCrc(new byte[len]));
            ChapKeyException e = assertThrows(ChapKeyException.class, () -> DhchapKey.parse(bad));
            assertTrue(e.getMessage().contains("32, 48 or 64"), e.getMessage());
            assertNoLeak(bad, e.getMessage());
        }
    }

    @Test
    void badPrefixIsRejected() {
        String good = ChapSecrets.generate(1, 32);
        for (String bad : new String[] {good.replace("DHHC-1", "DHHC-2"), good.substring(1), "dhhc-1" + good.substring(6),
                good.substring(0, good.length() - 1), good.replace(":01:", ":1:"), good + "x"}) {
            ChapKeyException e = assertThrows(ChapKeyException.class, () -> DhchapKey.parse(bad), bad);
            assertNoLeak(bad, e.getMessage());
        }
        assertThrows(ChapKeyException.class, () -> DhchapKey.parse(""));
        assertThrows(ChapKeyException.class, () -> DhchapKey.parse(null));
    }

    @Test
    void badTransformHashIsRejected() {
        String bad = secretOf("04", withCrc(new byte[32]));
        ChapKeyException e = assertThrows(ChapKeyException.class, () -> DhchapKey.parse(bad));
        assertTrue(e.getMessage().contains("00..03"), e.getMessage());
    }

    @Test
    void badBase64IsRejected() {
        String good = ChapSecrets.generate(0, 32);
        String bad = good.substring(0, 12) + "=" + good.substring(13);
        ChapKeyException e = assertThrows(ChapKeyException.class, () -> DhchapKey.parse(bad));
        assertNoLeak(bad, e.getMessage());
    }

    @Test
    void toStringHidesTheKey() throws Exception {
        byte[] key = new byte[32];
        Arrays.fill(key, (byte) 0x41);
        String s = secretOf("01", withCrc(key));
        DhchapKey k = DhchapKey.parse(s);
        assertFalse(k.toString().contains("QUFB"), k.toString());
        assertEquals("DHHC-1 key (transform sha256, 32 bytes)", k.toString());
        assertFalse(new HostKeys(k, k).toString().contains("QUFB"));
    }

    @Test
    void transformMatchesNvme() throws Exception {
        byte[] key = new byte[48];
        for (int i = 0; i < key.length; i++) {
            key[i] = (byte) i;
        }
        String id = "nqn.2014-08.org.nvmexpress:uuid:1234";
        assertArrayEquals(key, DhchapKey.parse(secretOf("00", withCrc(key))).transformed(id));
        String[] macs = {null, "HmacSHA256", "HmacSHA384", "HmacSHA512"};
        for (int hh = 1; hh <= 3; hh++) {
            Mac mac = Mac.getInstance(macs[hh]);
            mac.init(new SecretKeySpec(key, macs[hh]));
            mac.update(id.getBytes(StandardCharsets.UTF_8));
            byte[] expected = mac.doFinal("NVMe-over-Fabrics".getBytes(StandardCharsets.US_ASCII));
            assertArrayEquals(expected, DhchapKey.parse(secretOf("0" + hh, withCrc(key))).transformed(id));
        }
    }

    static void assertNoLeak(String secret, String message) {
        String b64 = secret.length() > 12 ? secret.substring(10, Math.max(11, secret.length() - 1)) : secret;
        if (b64.length() >= 8) {
            for (int i = 0; i + 8 <= b64.length(); i += 4) {
                assertFalse(message.contains(b64.substring(i, i + 8)), "message leaks the secret: " + message);
            }
        }
    }
}

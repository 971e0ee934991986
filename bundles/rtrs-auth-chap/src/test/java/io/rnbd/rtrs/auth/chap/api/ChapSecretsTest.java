package io.rnbd.rtrs.auth.chap.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Base64;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;

class ChapSecretsTest {

    @Test
    void generatedSecretsFollowTheDhhc1Format() {
        for (int hh = 0; hh <= 3; hh++) {
            for (int len : new int[] {32, 48, 64}) {
                String s = ChapSecrets.generate(hh, len);
                assertTrue(s.startsWith(String.format("DHHC-1:%02d:", hh)), s);
                assertTrue(s.endsWith(":"), s);
                byte[] raw = Base64.getDecoder().decode(s.substring(10, s.length() - 1));
                assertEquals(len + 4, raw.length);
                CRC32 crc = new CRC32();
                crc.update(raw, 0, len);
                assertEquals((int) crc.getValue(), ByteBuffer.wrap(raw, len, 4).order(ByteOrder.LITTLE_ENDIAN).getInt());
            }
        }
        assertNotEquals(ChapSecrets.generate(1, 32), ChapSecrets.generate(1, 32));
    }

    @Test
    void knownKeyFormatsAsExpected() {
        byte[] key = new byte[32];
        Arrays.fill(key, (byte) 0);
        // CRC-32 of 32 zero bytes is 0x190a55ad, stored little-endian
        assertEquals("DHHC-1:00:" + Base64.getEncoder().encodeToString(
                ByteBuffer.allocate(36).order(ByteOrder.LITTLE_ENDIAN).put(key).putInt(0x190a55ad).array()) + ":",
                ChapSecrets.format(0, key));
    }

    @Test
    void rejectsBadParameters() {
        assertThrows(IllegalArgumentException.class, () -> ChapSecrets.generate(4, 32));
        assertThrows(IllegalArgumentException.class, () -> ChapSecrets.generate(-1, 32));
        assertThrows(IllegalArgumentException.class, () -> ChapSecrets.generate(1, 40));
    }
}

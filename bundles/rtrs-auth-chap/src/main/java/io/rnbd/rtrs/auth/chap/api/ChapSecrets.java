package io.rnbd.rtrs.auth.chap.api;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.zip.CRC32;

/** Generates secrets in the NVMe DH-HMAC-CHAP format {@code DHHC-1:hh:base64(key || crc32-le(key)):}. */
public final class ChapSecrets {
    private static final SecureRandom RANDOM = new SecureRandom();

    private ChapSecrets() {
    }

    /**
     * A fresh random secret.
     *
     * @param transform the key transform hash: 0 none, 1 SHA-256, 2 SHA-384, 3 SHA-512
     * @param keyLength 32, 48 or 64 bytes
     */
    public static String generate(int transform, int keyLength) {
        return generate(transform, keyLength, RANDOM);
    }

    /** As {@link #generate(int, int)}, drawing the key from {@code random}. */
    public static String generate(int transform, int keyLength, SecureRandom random) {
        if (transform < 0 || transform > 3) {
            throw new IllegalArgumentException("transform must be 0..3, got " + transform);
        }
        if (keyLength != 32 && keyLength != 48 && keyLength != 64) {
            throw new IllegalArgumentException("key length must be 32, 48 or 64 bytes, got " + keyLength);
        }
        byte[] key = new byte[keyLength];
        random.nextBytes(key);
        try {
            return format(transform, key);
        } finally {
            Arrays.fill(key, (byte) 0);
        }
    }

    /** Encodes {@code key} with its CRC; the caller owns (and should wipe) {@code key}. */
    public static String format(int transform, byte[] key) {
        CRC32 crc = new CRC32();
        crc.update(key);
        ByteBuffer b = ByteBuffer.allocate(key.length + 4).order(ByteOrder.LITTLE_ENDIAN);
        b.put(key).putInt((int) crc.getValue());
        byte[] raw = b.array();
        try {
            return String.format("DHHC-1:%02d:%s:", transform, Base64.getEncoder().encodeToString(raw));
        } finally {
            Arrays.fill(raw, (byte) 0);
        }
    }
}

package io.rnbd.rtrs.auth.chap.internal;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Locale;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** The DH-HMAC-CHAP hash functions with their NVMe identifiers. */
public enum ChapHash {
    SHA256(1, "sha256", "HmacSHA256", "SHA-256", 32),
    SHA384(2, "sha384", "HmacSHA384", "SHA-384", 48),
    SHA512(3, "sha512", "HmacSHA512", "SHA-512", 64);

    private final int id;
    private final String configName;
    private final String macAlgorithm;
    private final String digestAlgorithm;
    private final int length;

    ChapHash(int id, String configName, String macAlgorithm, String digestAlgorithm, int length) {
        this.id = id;
        this.configName = configName;
        this.macAlgorithm = macAlgorithm;
        this.digestAlgorithm = digestAlgorithm;
        this.length = length;
    }

    public int id() {
        return id;
    }

    public String configName() {
        return configName;
    }

    /** Output length in bytes, also the challenge and response length ("hl"). */
    public int length() {
        return length;
    }

    /** @return the hash with this wire id, or null */
    public static ChapHash byId(int id) {
        for (ChapHash h : values()) {
            if (h.id == id) {
                return h;
            }
        }
        return null;
    }

    /** @throws IllegalArgumentException for an unknown name */
    public static ChapHash byName(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT).replace("hmac(", "").replace(")", "").replace("-", "");
        for (ChapHash h : values()) {
            if (h.configName.equals(n)) {
                return h;
            }
        }
        throw new IllegalArgumentException("unknown hash '" + name.trim() + "' (sha256, sha384, sha512)");
    }

    public byte[] hmac(byte[] key, byte[]... parts) {
        try {
            Mac mac = Mac.getInstance(macAlgorithm);
            mac.init(new SecretKeySpec(key, macAlgorithm));
            for (byte[] p : parts) {
                mac.update(p);
            }
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            // every Java 17 runtime ships HmacSHA256/384/512
            throw new IllegalStateException(macAlgorithm + " unavailable", e);
        }
    }

    public byte[] digest(byte[] data) {
        try {
            return MessageDigest.getInstance(digestAlgorithm).digest(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(digestAlgorithm + " unavailable", e);
        }
    }
}

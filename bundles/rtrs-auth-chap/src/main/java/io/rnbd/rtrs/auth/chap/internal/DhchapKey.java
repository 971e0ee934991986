package io.rnbd.rtrs.auth.chap.internal;

import io.rnbd.rtrs.auth.chap.api.ChapSecrets;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32;

/**
 * A parsed DHHC-1 secret: {@code DHHC-1:hh:base64(key || crc32-le(key)):}, hh naming the
 * key transform (00 none, 01 SHA-256, 02 SHA-384, 03 SHA-512), key 32, 48 or 64 bytes.
 * Like the Linux kernel, any of the three lengths is accepted with any transform.
 * Immutable; {@link #toString()} never shows the key.
 */
public final class DhchapKey {
    private static final Pattern FORMAT = Pattern.compile("DHHC-1:([0-9]{2}):([A-Za-z0-9+/=]+):");
    private static final byte[] TRANSFORM_LABEL = "NVMe-over-Fabrics".getBytes(StandardCharsets.US_ASCII);

    private final int transform;
    private final byte[] key;

    private DhchapKey(int transform, byte[] key) {
        this.transform = transform;
        this.key = key;
    }

    public static DhchapKey parse(String secret) throws ChapKeyException {
        if (secret == null || secret.isBlank()) {
            throw new ChapKeyException("empty secret");
        }
        String s = secret.trim();
        if (!s.startsWith("DHHC-1:")) {
            throw new ChapKeyException("secret must start with 'DHHC-1:'");
        }
        Matcher m = FORMAT.matcher(s);
        if (!m.matches()) {
            throw new ChapKeyException("secret must look like DHHC-1:<hh>:<base64>: with hh two digits");
        }
        int hh = Integer.parseInt(m.group(1));
        if (hh > 3) {
            throw new ChapKeyException("transform hash hh must be 00..03, got " + m.group(1));
        }
        byte[] raw;
        try {
            raw = Base64.getDecoder().decode(m.group(2));
        } catch (IllegalArgumentException e) {
            throw new ChapKeyException("secret is not valid base64");
        }
        try {
            int keyLen = raw.length - 4;
            if (keyLen != 32 && keyLen != 48 && keyLen != 64) {
                throw new ChapKeyException("secret must decode to a 32, 48 or 64 byte key plus a 4 byte CRC, got "
                        + raw.length + " bytes");
            }
            CRC32 crc = new CRC32();
            crc.update(raw, 0, keyLen);
            int stored = ByteBuffer.wrap(raw, keyLen, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
            if (stored != (int) crc.getValue()) {
                throw new ChapKeyException("secret CRC mismatch (mistyped or truncated secret?)");
            }
            return new DhchapKey(hh, Arrays.copyOf(raw, keyLen));
        } finally {
            Arrays.fill(raw, (byte) 0);
        }
    }

    /** 0 none, 1..3 the {@link ChapHash} id used to transform the key. */
    public int transform() {
        return transform;
    }

    public int length() {
        return key.length;
    }

    public String transformName() {
        return transform == 0 ? "none" : ChapHash.byId(transform).configName();
    }

    /**
     * NVMe's key transform: the raw key for hh 00, else
     * {@code HMAC-hh(key, identity || "NVMe-over-Fabrics")}. The host key is transformed
     * with the host id, the controller key with the target id.
     */
    byte[] transformed(String identity) {
        if (transform == 0) {
            return key.clone();
        }
        return ChapHash.byId(transform).hmac(key, identity.getBytes(StandardCharsets.UTF_8), TRANSFORM_LABEL);
    }

    /** The secret in DHHC-1 form, for rewriting the keys file only. */
    String encoded() {
        return ChapSecrets.format(transform, key);
    }

    @Override
    public String toString() {
        return "DHHC-1 key (transform " + transformName() + ", " + key.length + " bytes)";
    }
}

package io.rnbd.rtrs.auth.chap.api;

/**
 * What an operator may see of one host's CHAP keys: everything except the secrets.
 *
 * @param hostId     the host identity the keys belong to
 * @param transform  the DHHC-1 key transform hash: "none", "sha256", "sha384" or "sha512"
 * @param keyLength  the secret's length in bytes (32, 48 or 64)
 * @param hasCtrlKey a controller key is configured, so the host may ask for bidirectional auth
 * @param source     where the keys come from: {@link #SOURCE_CONFIG} or {@link #SOURCE_FILE}
 */
public record ChapKeyInfo(String hostId, String transform, int keyLength, boolean hasCtrlKey, String source) {
    public static final String SOURCE_CONFIG = "config";
    public static final String SOURCE_FILE = "file";
}

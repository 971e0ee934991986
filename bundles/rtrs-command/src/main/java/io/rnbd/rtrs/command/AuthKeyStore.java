package io.rnbd.rtrs.command;

import java.io.IOException;
import java.util.List;

/**
 * The key commands' view of the CHAP key store, so that no command class names a type of the
 * optional chap API (see {@link AuthKeyStores}).
 */
public interface AuthKeyStore {
    /** What may be shown of a host's keys: never the secrets. */
    record KeyInfo(String hostId, String transform, int keyLength, boolean hasCtrlKey, String source) {
    }

    List<KeyInfo> list();

    /** Adds or replaces a host's keys; {@code ctrlSecret} null for none. */
    void put(String hostId, String hostSecret, String ctrlSecret) throws IOException;

    /** @return false when the keys file has no entry for {@code hostId} */
    boolean remove(String hostId) throws IOException;

    /**
     * A fresh DHHC-1 secret.
     *
     * @param transform 0 none, 1 SHA-256, 2 SHA-384, 3 SHA-512
     * @param keyLength 32, 48 or 64 bytes
     */
    String generate(int transform, int keyLength);
}

package io.rnbd.rtrs.command.internal.chap;

import io.rnbd.rtrs.auth.chap.api.ChapKeyAdmin;
import io.rnbd.rtrs.auth.chap.api.ChapKeyInfo;
import io.rnbd.rtrs.auth.chap.api.ChapSecrets;
import io.rnbd.rtrs.command.AuthKeyStore;
import java.io.IOException;
import java.util.List;

/**
 * The chap bundle's {@link ChapKeyAdmin} as an {@link AuthKeyStore}: the only class touching
 * the optional chap API, loaded only once such a service was found.
 */
public final class ChapKeyStore implements AuthKeyStore {
    private final ChapKeyAdmin admin;

    public ChapKeyStore(ChapKeyAdmin admin) {
        this.admin = admin;
    }

    /** @param service a ChapKeyAdmin service object, typed Object so callers need not name the type */
    public static AuthKeyStore of(Object service) {
        return new ChapKeyStore((ChapKeyAdmin) service);
    }

    @Override
    public List<KeyInfo> list() {
        return admin.list().stream().map(ChapKeyStore::info).toList();
    }

    private static KeyInfo info(ChapKeyInfo k) {
        return new KeyInfo(k.hostId(), k.transform(), k.keyLength(), k.hasCtrlKey(), k.source());
    }

    @Override
    public void put(String hostId, String hostSecret, String ctrlSecret) throws IOException {
        admin.put(hostId, hostSecret, ctrlSecret);
    }

    @Override
    public boolean remove(String hostId) throws IOException {
        return admin.remove(hostId);
    }

    @Override
    public String generate(int transform, int keyLength) {
        return ChapSecrets.generate(transform, keyLength);
    }
}

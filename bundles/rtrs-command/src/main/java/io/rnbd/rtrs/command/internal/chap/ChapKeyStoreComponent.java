package io.rnbd.rtrs.command.internal.chap;

import io.rnbd.rtrs.auth.chap.api.ChapKeyAdmin;
import io.rnbd.rtrs.auth.chap.api.ChapKeyInfo;
import io.rnbd.rtrs.auth.chap.api.ChapSecrets;
import io.rnbd.rtrs.command.AuthKeyStore;
import java.io.IOException;
import java.util.List;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Offers the chap bundle's {@link ChapKeyAdmin} to the key commands as an {@link AuthKeyStore}.
 * The only class touching the optional chap API: SCR loads it once a ChapKeyAdmin is
 * registered, so without the chap bundle nothing here is ever resolved.
 */
@Component(service = AuthKeyStore.class)
public final class ChapKeyStoreComponent implements AuthKeyStore {
    private final ChapKeyAdmin admin;

    @Activate
    public ChapKeyStoreComponent(@Reference ChapKeyAdmin admin) {
        this.admin = admin;
    }

    @Override
    public List<KeyInfo> list() {
        return admin.list().stream().map(ChapKeyStoreComponent::info).toList();
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

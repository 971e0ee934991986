package io.rnbd.rtrs.auth.chap.internal;

import io.rnbd.rtrs.auth.chap.api.ChapKeyAdmin;
import io.rnbd.rtrs.auth.chap.api.ChapKeyInfo;
import java.io.IOException;
import java.util.List;

/** Writes keys to the keys file and puts the result in force at once. */
public final class ChapKeyAdminImpl implements ChapKeyAdmin {
    private final ChapKeyStore store;
    private final KeyFile file;

    /** @param file the keys file, or null when none is configured (the admin is then read-only) */
    public ChapKeyAdminImpl(ChapKeyStore store, KeyFile file) {
        this.store = store;
        this.file = file;
    }

    @Override
    public List<ChapKeyInfo> list() {
        return store.list();
    }

    @Override
    public void put(String hostId, String hostSecret, String ctrlSecret) throws IOException {
        String problem = HostIds.problem(hostId);
        if (problem != null) {
            throw new IllegalArgumentException("host id: " + problem);
        }
        HostKeys keys;
        try {
            keys = new HostKeys(DhchapKey.parse(hostSecret),
                    ctrlSecret == null || ctrlSecret.isBlank() ? null : DhchapKey.parse(ctrlSecret));
        } catch (ChapKeyException e) {
            throw new IllegalArgumentException(e.getMessage());
        }
        KeyFile f = requireFile();
        try {
            f.put(hostId, keys);
            store.setFileKeys(f.load());
        } catch (ChapKeyException e) {
            throw new IOException(e.getMessage());
        }
    }

    @Override
    public boolean remove(String hostId) throws IOException {
        KeyFile f = requireFile();
        try {
            boolean removed = f.remove(hostId);
            store.setFileKeys(f.load());
            if (!removed && store.inConfig(hostId)) {
                throw new IllegalStateException("keys of host '" + hostId
                        + "' are set in the configuration (PID io.rnbd.rtrs.auth.chap); remove them there");
            }
            return removed;
        } catch (ChapKeyException e) {
            throw new IOException(e.getMessage());
        }
    }

    private KeyFile requireFile() {
        if (file == null) {
            throw new IllegalStateException("no keys.file configured for PID io.rnbd.rtrs.auth.chap");
        }
        return file;
    }
}

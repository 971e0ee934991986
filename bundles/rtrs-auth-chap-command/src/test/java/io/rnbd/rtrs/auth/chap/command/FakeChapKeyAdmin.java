package io.rnbd.rtrs.auth.chap.command;

import io.rnbd.rtrs.auth.chap.api.ChapKeyAdmin;
import io.rnbd.rtrs.auth.chap.api.ChapKeyInfo;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A key admin in memory that keeps the secrets, as the real one does, so a leak into the
 * listing would show. Host ids starting with "cfg" come from the configuration (read-only);
 * "io" cannot be removed because the keys file is not writable.
 */
public final class FakeChapKeyAdmin implements ChapKeyAdmin {
    /** host id to {host secret, ctrl secret or null} */
    public final Map<String, String[]> keys = new TreeMap<>();

    @Override
    public List<ChapKeyInfo> list() {
        return keys.entrySet().stream().map(e -> new ChapKeyInfo(e.getKey(), "none", 32, e.getValue()[1] != null,
                e.getKey().startsWith("cfg") ? ChapKeyInfo.SOURCE_CONFIG : ChapKeyInfo.SOURCE_FILE)).toList();
    }

    @Override
    public void put(String hostId, String hostSecret, String ctrlSecret) {
        if (!hostSecret.startsWith("DHHC-1:")) {
            throw new IllegalArgumentException("host secret is not in DHHC-1 format");
        }
        keys.put(hostId, new String[] {hostSecret, ctrlSecret});
    }

    @Override
    public boolean remove(String hostId) throws IOException {
        if (hostId.startsWith("cfg")) {
            throw new IllegalStateException("the keys of " + hostId + " come from the configuration");
        }
        if (hostId.equals("io")) {
            throw new IOException("keys file not writable");
        }
        return keys.remove(hostId) != null;
    }
}

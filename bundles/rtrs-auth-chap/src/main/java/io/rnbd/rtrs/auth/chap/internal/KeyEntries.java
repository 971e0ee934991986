package io.rnbd.rtrs.auth.chap.internal;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Turns {@code host.<id>=<secret>} / {@code ctrl.<id>=<secret>} entries (from the
 * configuration or the keys file) into {@link HostKeys} per host id.
 */
public final class KeyEntries {
    public static final String HOST_PREFIX = "host.";
    public static final String CTRL_PREFIX = "ctrl.";

    private KeyEntries() {
    }

    public static boolean isKeyEntry(String name) {
        return name.startsWith(HOST_PREFIX) || name.startsWith(CTRL_PREFIX);
    }

    /** @param where names the source in error messages, e.g. "configuration" or a file path */
    public static Map<String, HostKeys> parse(Map<String, String> entries, String where) throws ChapKeyException {
        Map<String, DhchapKey> host = new HashMap<>();
        Map<String, DhchapKey> ctrl = new HashMap<>();
        for (Map.Entry<String, String> e : entries.entrySet()) {
            String name = e.getKey();
            boolean isHost = name.startsWith(HOST_PREFIX);
            if (!isHost && !name.startsWith(CTRL_PREFIX)) {
                continue;
            }
            String id = name.substring(isHost ? HOST_PREFIX.length() : CTRL_PREFIX.length());
            String idProblem = HostIds.problem(id);
            if (idProblem != null) {
                throw new ChapKeyException(where + ": bad host id in '" + name + "': " + idProblem);
            }
            DhchapKey key;
            try {
                key = DhchapKey.parse(e.getValue());
            } catch (ChapKeyException bad) {
                throw new ChapKeyException(where + ": " + name + ": " + bad.getMessage());
            }
            (isHost ? host : ctrl).put(id, key);
        }
        Map<String, HostKeys> out = new TreeMap<>();
        for (String id : ctrl.keySet()) {
            if (!host.containsKey(id)) {
                throw new ChapKeyException(where + ": " + CTRL_PREFIX + id + " needs " + HOST_PREFIX + id);
            }
        }
        for (Map.Entry<String, DhchapKey> e : host.entrySet()) {
            out.put(e.getKey(), new HostKeys(e.getValue(), ctrl.get(e.getKey())));
        }
        return Map.copyOf(out);
    }
}

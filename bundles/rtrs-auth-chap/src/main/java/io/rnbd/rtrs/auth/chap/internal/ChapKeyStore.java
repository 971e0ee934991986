package io.rnbd.rtrs.auth.chap.internal;

import io.rnbd.rtrs.auth.chap.api.ChapKeyInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The keys in force, from two sources: the configuration and the keys file (the file wins
 * for a host id present in both). Each source is replaced as a whole; an exchange looks its
 * host up once when it starts, so a rotation affects only exchanges that start afterwards.
 */
public final class ChapKeyStore {
    private record Sources(Map<String, HostKeys> config, Map<String, HostKeys> file) {
    }

    private final AtomicReference<Sources> sources = new AtomicReference<>(new Sources(Map.of(), Map.of()));

    public void setConfigKeys(Map<String, HostKeys> keys) {
        Map<String, HostKeys> copy = Map.copyOf(keys);
        sources.updateAndGet(s -> new Sources(copy, s.file()));
    }

    public void setFileKeys(Map<String, HostKeys> keys) {
        Map<String, HostKeys> copy = Map.copyOf(keys);
        sources.updateAndGet(s -> new Sources(s.config(), copy));
    }

    /** @return the keys of {@code hostId}, or null when it has none */
    public HostKeys lookup(String hostId) {
        Sources s = sources.get();
        HostKeys k = s.file().get(hostId);
        return k != null ? k : s.config().get(hostId);
    }

    public boolean inConfig(String hostId) {
        return sources.get().config().containsKey(hostId);
    }

    public List<ChapKeyInfo> list() {
        Sources s = sources.get();
        Map<String, ChapKeyInfo> out = new TreeMap<>();
        s.config().forEach((id, k) -> out.put(id, info(id, k, ChapKeyInfo.SOURCE_CONFIG)));
        s.file().forEach((id, k) -> out.put(id, info(id, k, ChapKeyInfo.SOURCE_FILE)));
        return List.copyOf(new ArrayList<>(out.values()));
    }

    private static ChapKeyInfo info(String id, HostKeys k, String source) {
        return new ChapKeyInfo(id, k.hostKey().transformName(), k.hostKey().length(), k.hasCtrlKey(), source);
    }

    @Override
    public String toString() {
        Sources s = sources.get();
        return "ChapKeyStore[" + s.config().size() + " from config, " + s.file().size() + " from file]";
    }
}

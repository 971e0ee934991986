package io.rnbd.rtrs.auth.chap.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What this node offers (as host) and accepts in preference order (as target), and its own
 * identity as a target.
 */
public record ChapSettings(String targetId, List<ChapHash> hashes, List<DhGroup> dhGroups) {
    public static final String DEFAULT_HASHES = "sha512,sha384,sha256";
    public static final String DEFAULT_DH_GROUPS = "ffdhe2048,ffdhe3072,ffdhe4096,ffdhe6144,ffdhe8192,null";

    public ChapSettings {
        Objects.requireNonNull(targetId, "targetId");
        String problem = HostIds.problem(targetId);
        if (problem != null) {
            throw new IllegalArgumentException("target.id: " + problem);
        }
        if (hashes.isEmpty() || dhGroups.isEmpty()) {
            throw new IllegalArgumentException("hashes and dhgroups must each name at least one entry");
        }
        hashes = List.copyOf(hashes);
        dhGroups = List.copyOf(dhGroups);
    }

    /** @throws IllegalArgumentException with a message naming the bad entry */
    public static ChapSettings parse(String targetId, String hashes, String dhGroups) {
        List<ChapHash> hs = new ArrayList<>();
        for (String h : split(hashes)) {
            ChapHash hash = ChapHash.byName(h);
            if (!hs.contains(hash)) {
                hs.add(hash);
            }
        }
        List<DhGroup> gs = new ArrayList<>();
        for (String g : split(dhGroups)) {
            DhGroup group = DhGroup.byName(g);
            if (!gs.contains(group)) {
                gs.add(group);
            }
        }
        return new ChapSettings(targetId, hs, gs);
    }

    private static List<String> split(String list) {
        List<String> out = new ArrayList<>();
        for (String s : (list == null ? "" : list).split(",")) {
            if (!s.isBlank()) {
                out.add(s.trim());
            }
        }
        return out;
    }
}

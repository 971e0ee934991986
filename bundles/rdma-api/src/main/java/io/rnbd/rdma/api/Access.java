package io.rnbd.rdma.api;

import java.util.EnumSet;
import java.util.Set;

/** Memory region access flags (IBV_ACCESS_*). */
public enum Access {
    LOCAL_WRITE,
    REMOTE_WRITE,
    REMOTE_READ;

    public static Set<Access> of(Access... flags) {
        EnumSet<Access> s = EnumSet.noneOf(Access.class);
        for (Access a : flags) {
            s.add(a);
        }
        return s;
    }

    public static Set<Access> all() {
        return EnumSet.allOf(Access.class);
    }
}

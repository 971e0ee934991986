package io.rnbd.rtrs.auth.chap.internal;

import java.util.Objects;

/**
 * The keys of one host identity: the host key (both sides know it; the host proves it) and
 * optionally the controller key (the target proves it when the host asks, bidirectional).
 */
public record HostKeys(DhchapKey hostKey, DhchapKey ctrlKey) {
    public HostKeys {
        Objects.requireNonNull(hostKey, "hostKey");
    }

    public boolean hasCtrlKey() {
        return ctrlKey != null;
    }

    @Override
    public String toString() {
        return "HostKeys[host=" + hostKey + ", ctrl=" + (ctrlKey == null ? "none" : ctrlKey) + "]";
    }
}

package io.rnbd.rtrs.mp.mininflight.internal;

import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.api.PathView;
import java.util.List;

/**
 * The kernel's default: the path with the fewest requests in flight. The scan starts at a
 * position rotated by the request counter and keeps the first minimum it meets, so equally
 * loaded paths (an idle session) take turns instead of the first one taking everything.
 */
public class MinInflightPolicy implements MultipathPolicy {

    @Override
    public String name() {
        return MIN_INFLIGHT;
    }

    @Override
    public PathView select(List<? extends PathView> candidates, long sequence) {
        int n = candidates.size();
        int start = Math.floorMod(sequence, n);
        PathView best = null;
        int bestInflight = Integer.MAX_VALUE;
        for (int i = 0; i < n; i++) {
            PathView path = candidates.get((start + i) % n);
            // read once: the value is live and may change between two reads
            int inflight = path.inflight();
            if (best == null || inflight < bestInflight) {
                best = path;
                bestInflight = inflight;
            }
        }
        return best;
    }

    @Override
    public String toString() {
        return name();
    }
}

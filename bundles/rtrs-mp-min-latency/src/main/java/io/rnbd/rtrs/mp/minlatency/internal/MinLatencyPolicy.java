package io.rnbd.rtrs.mp.minlatency.internal;

import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.api.PathView;
import java.util.List;

/**
 * The path with the lowest {@link #score(PathView)}. The kernel's min-latency looks only at
 * the last heartbeat RTT, which is refreshed every few seconds; adding the live IO latency
 * average lets the choice follow a slowing path within a few completions. Equal scores
 * (typically several unmeasured paths) take turns with the request counter.
 */
public class MinLatencyPolicy implements MultipathPolicy {

    @Override
    public String name() {
        return MIN_LATENCY;
    }

    /**
     * {@code ioLatencyNanos + heartbeatRttNanos}, or 0 while the path has no IO latency
     * sample, so that a new or reconnected path is tried and gets measured.
     */
    static long score(PathView path) {
        long io = path.ioLatencyNanos();
        if (io <= 0) {
            return 0;
        }
        long sum = io + Math.max(0, path.heartbeatRttNanos());
        return sum < 0 ? Long.MAX_VALUE : sum;
    }

    @Override
    public PathView select(List<? extends PathView> candidates, long sequence) {
        int n = candidates.size();
        int start = Math.floorMod(sequence, n);
        PathView best = null;
        long bestScore = Long.MAX_VALUE;
        for (int i = 0; i < n; i++) {
            PathView path = candidates.get((start + i) % n);
            long score = score(path);
            if (best == null || score < bestScore) {
                best = path;
                bestScore = score;
            }
        }
        return best;
    }

    @Override
    public String toString() {
        return name();
    }
}

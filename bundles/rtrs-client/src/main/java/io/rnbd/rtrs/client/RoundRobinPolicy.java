package io.rnbd.rtrs.client;

import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.api.PathView;

import java.util.List;

/** The built-in floor when no policy service is present. */
final class RoundRobinPolicy implements MultipathPolicy {
    static final RoundRobinPolicy INSTANCE = new RoundRobinPolicy();

    @Override
    public String name() {
        return ROUND_ROBIN;
    }

    @Override
    public PathView select(List<? extends PathView> candidates, long sequence) {
        return candidates.get((int) Math.floorMod(sequence, (long) candidates.size()));
    }
}

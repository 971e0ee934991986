package io.rnbd.rtrs.mp.roundrobin.internal;

import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.api.PathView;
import java.util.List;

/**
 * Rotates over the candidates with the session's request counter. The counter lives in
 * the session, so this object holds no state and one instance serves every session.
 *
 * <p>The one source of round-robin: rtrs-client packs this package into its own jar at
 * build time ({@code -conditionalpackage}) as the floor its sessions use when no policy
 * service is present. Keep the package plain Java with no other class.
 */
public class RoundRobinPolicy implements MultipathPolicy {

    @Override
    public String name() {
        return ROUND_ROBIN;
    }

    @Override
    public PathView select(List<? extends PathView> candidates, long sequence) {
        return candidates.get(Math.floorMod(sequence, candidates.size()));
    }

    @Override
    public String toString() {
        return name();
    }
}

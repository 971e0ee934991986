package io.rnbd.rtrs.api;

import java.util.List;

/**
 * Chooses the path for each request. Registered as an OSGi service with the property
 * {@link #PROP_NAME}; sessions pick the service whose name matches their {@code mp.policy}
 * and fall back to the next-ranked one (the built-in round-robin at the floor) while it
 * is absent. Implementations must be stateless across sessions and thread-safe.
 */
public interface MultipathPolicy {
    String PROP_NAME = "rtrs.mp.policy";

    String ROUND_ROBIN = "round-robin";
    String MIN_INFLIGHT = "min-inflight";
    String MIN_LATENCY = "min-latency";

    String name();

    /**
     * @param candidates connected paths not yet tried for this request, in stable order; never empty
     * @param sequence   the session's request counter, for policies that rotate
     * @return one of {@code candidates}
     */
    PathView select(List<? extends PathView> candidates, long sequence);
}

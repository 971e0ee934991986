package io.rnbd.rtrs.client.internal;

import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.api.PathView;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Which policy a session routes by: the configured service, else the best-ranked, else the floor. */
class MpPolicyTest {
    private static MultipathPolicy named(String name) {
        return new MultipathPolicy() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public PathView select(List<? extends PathView> candidates, long sequence) {
                return candidates.get(0);
            }
        };
    }

    @Test
    void theConfiguredServiceElseTheBestRankedElseTheRoundRobinFloor() {
        MpPolicy mp = new MpPolicy(MultipathPolicy.MIN_INFLIGHT);
        assertEquals(MultipathPolicy.ROUND_ROBIN, mp.active(), "no service: the built-in floor");

        mp.policies(List.of(named(MultipathPolicy.MIN_LATENCY), named(MultipathPolicy.MIN_INFLIGHT)));
        assertEquals(MultipathPolicy.MIN_INFLIGHT, mp.active(), "the configured one, whatever its rank");

        mp.policies(List.of(named(MultipathPolicy.MIN_LATENCY)));
        assertEquals(MultipathPolicy.MIN_LATENCY, mp.active(), "the configured one gone: the best-ranked");
        assertEquals(MultipathPolicy.MIN_INFLIGHT, mp.configured());

        mp.configure(MultipathPolicy.ROUND_ROBIN);
        assertEquals(MultipathPolicy.MIN_LATENCY, mp.active(), "round-robin is a service too; absent here");

        mp.policies(List.of());
        assertEquals(MultipathPolicy.ROUND_ROBIN, mp.active(), "every service gone: the floor again");
    }
}

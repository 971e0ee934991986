package io.rnbd.rtrs.mp.roundrobin.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.rnbd.rtrs.api.FakePath;
import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.api.PathView;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RoundRobinPolicyTest {
    private final RoundRobinPolicy policy = new RoundRobinPolicy();
    private final FakePath a = new FakePath("a@x");
    private final FakePath b = new FakePath("b@x");
    private final FakePath c = new FakePath("c@x");

    @Test
    void nameIsTheWireName() {
        assertEquals(MultipathPolicy.ROUND_ROBIN, policy.name());
    }

    @Test
    void rotatesInOrder() {
        List<FakePath> paths = List.of(a, b, c);
        assertSame(a, policy.select(paths, 0));
        assertSame(b, policy.select(paths, 1));
        assertSame(c, policy.select(paths, 2));
        assertSame(a, policy.select(paths, 3));
    }

    @Test
    void spreadsEvenlyIgnoringLoad() {
        a.inflight = 100;
        a.ioLatencyNanos = 9_000_000;
        Map<String, Integer> hits = new HashMap<>();
        List<FakePath> paths = List.of(a, b, c);
        for (long seq = 0; seq < 300; seq++) {
            hits.merge(policy.select(paths, seq).name(), 1, Integer::sum);
        }
        assertEquals(Map.of("a@x", 100, "b@x", 100, "c@x", 100), hits);
    }

    @Test
    void negativeAndWrappedSequencesStayInRange() {
        List<FakePath> paths = List.of(a, b, c);
        assertSame(c, policy.select(paths, -1));
        // 2^63 = 2 (mod 3): MIN = -2 = 1, MIN + 1 = 2, MAX = 1 (mod 3)
        assertSame(c, policy.select(paths, Long.MIN_VALUE + 1));
        assertSame(b, policy.select(paths, Long.MAX_VALUE));
        PathView afterWrap = policy.select(paths, Long.MAX_VALUE + 1);
        assertSame(b, afterWrap);
    }

    @Test
    void singleCandidateIsAlwaysChosen() {
        for (long seq = -5; seq < 5; seq++) {
            assertSame(b, policy.select(List.of(b), seq));
        }
    }
}

package io.rnbd.rtrs.mp.mininflight.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.rnbd.rtrs.api.FakePath;
import io.rnbd.rtrs.api.MultipathPolicy;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MinInflightPolicyTest {
    private final MinInflightPolicy policy = new MinInflightPolicy();

    @Test
    void nameIsTheWireName() {
        assertEquals(MultipathPolicy.MIN_INFLIGHT, policy.name());
    }

    @Test
    void picksFewestInflightWhateverTheSequence() {
        FakePath a = new FakePath("a", 5, 0, 0);
        FakePath b = new FakePath("b", 1, 0, 0);
        FakePath c = new FakePath("c", 3, 0, 0);
        for (long seq = 0; seq < 10; seq++) {
            assertSame(b, policy.select(List.of(a, b, c), seq));
        }
    }

    @Test
    void tiesRotateWithTheSequence() {
        FakePath a = new FakePath("a", 2, 0, 0);
        FakePath b = new FakePath("b", 0, 0, 0);
        FakePath c = new FakePath("c", 0, 0, 0);
        FakePath d = new FakePath("d", 0, 0, 0);
        Map<String, Integer> hits = new HashMap<>();
        for (long seq = 0; seq < 400; seq++) {
            hits.merge(policy.select(List.of(a, b, c, d), seq).name(), 1, Integer::sum);
        }
        assertEquals(null, hits.get("a"));
        // start positions 0 (a -> skipped to b) and 1 hit b; 2 hits c; 3 hits d
        assertEquals(200, hits.get("b"));
        assertEquals(100, hits.get("c"));
        assertEquals(100, hits.get("d"));
    }

    @Test
    void idlePathsShareLoadEvenly() {
        List<FakePath> paths = List.of(new FakePath("a"), new FakePath("b"), new FakePath("c"));
        Map<String, Integer> hits = new HashMap<>();
        for (long seq = 0; seq < 30; seq++) {
            hits.merge(policy.select(paths, seq).name(), 1, Integer::sum);
        }
        assertEquals(Map.of("a", 10, "b", 10, "c", 10), hits);
    }

    @Test
    void loadFollowsInflightAsItChanges() {
        FakePath a = new FakePath("a");
        FakePath b = new FakePath("b");
        List<FakePath> paths = List.of(a, b);
        // simulate a session that never completes: each choice adds one inflight
        for (long seq = 0; seq < 100; seq++) {
            FakePath p = (FakePath) policy.select(paths, seq);
            p.inflight++;
        }
        assertEquals(50, a.inflight);
        assertEquals(50, b.inflight);
        a.inflight = 0; // a's completions drained
        assertSame(a, policy.select(paths, 101));
    }

    @Test
    void singleCandidateIsAlwaysChosen() {
        FakePath only = new FakePath("only", 1000, 0, 0);
        for (long seq = -3; seq < 3; seq++) {
            assertSame(only, policy.select(List.of(only), seq));
        }
    }

    @Test
    void negativeSequenceIsFine() {
        FakePath a = new FakePath("a");
        FakePath b = new FakePath("b");
        assertSame(b, policy.select(List.of(a, b), -1));
        assertSame(a, policy.select(List.of(a, b), Long.MIN_VALUE));
    }
}

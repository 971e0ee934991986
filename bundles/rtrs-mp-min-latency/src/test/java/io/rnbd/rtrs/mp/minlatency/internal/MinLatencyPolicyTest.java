package io.rnbd.rtrs.mp.minlatency.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.rnbd.rtrs.api.FakePath;
import io.rnbd.rtrs.api.MultipathPolicy;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MinLatencyPolicyTest {
    private static final long MS = 1_000_000L;
    private final MinLatencyPolicy policy = new MinLatencyPolicy();

    @Test
    void nameIsTheWireName() {
        assertEquals(MultipathPolicy.MIN_LATENCY, policy.name());
    }

    @Test
    void scoreIsIoLatencyPlusHeartbeatRtt() {
        assertEquals(3 * MS + 200_000, MinLatencyPolicy.score(new FakePath("a", 0, 200_000, 3 * MS)));
        assertEquals(3 * MS, MinLatencyPolicy.score(new FakePath("a", 0, 0, 3 * MS)));
    }

    @Test
    void unmeasuredPathScoresZero() {
        assertEquals(0, MinLatencyPolicy.score(new FakePath("new", 0, 0, 0)));
        // a heartbeat alone is not an IO sample: the path still needs IO to be measured
        assertEquals(0, MinLatencyPolicy.score(new FakePath("hb-only", 0, 5 * MS, 0)));
    }

    @Test
    void hugeValuesDoNotOverflowIntoAWinningScore() {
        FakePath broken = new FakePath("broken", 0, Long.MAX_VALUE, Long.MAX_VALUE);
        FakePath fine = new FakePath("fine", 0, MS, MS);
        assertSame(fine, policy.select(List.of(broken, fine), 0));
    }

    @Test
    void picksLowestScore() {
        FakePath a = new FakePath("a", 0, 100_000, 4 * MS);
        FakePath b = new FakePath("b", 0, 100_000, 1 * MS);
        FakePath c = new FakePath("c", 0, 3 * MS, 1 * MS); // fast IO but slow heartbeat
        for (long seq = 0; seq < 6; seq++) {
            assertSame(b, policy.select(List.of(a, b, c), seq));
        }
    }

    @Test
    void reactsAsSoonAsTheLiveAverageMoves() {
        FakePath a = new FakePath("a", 0, 100_000, 1 * MS);
        FakePath b = new FakePath("b", 0, 100_000, 2 * MS);
        List<FakePath> paths = List.of(a, b);
        assertSame(a, policy.select(paths, 0));
        a.ioLatencyNanos = 5 * MS; // a few slow completions on a
        assertSame(b, policy.select(paths, 1));
    }

    @Test
    void unmeasuredPathsAreTriedFirstAndTakeTurns() {
        FakePath measured = new FakePath("m", 0, 50_000, 100_000);
        FakePath x = new FakePath("x");
        FakePath y = new FakePath("y");
        Map<String, Integer> hits = new HashMap<>();
        for (long seq = 0; seq < 30; seq++) {
            hits.merge(policy.select(List.of(measured, x, y), seq).name(), 1, Integer::sum);
        }
        assertEquals(null, hits.get("m"));
        assertEquals(30, hits.get("x") + hits.get("y"));
        assertEquals(true, hits.get("x") >= 10 && hits.get("y") >= 10, hits.toString());
    }

    @Test
    void equalScoresRotate() {
        List<FakePath> paths = List.of(new FakePath("a", 0, MS, MS), new FakePath("b", 0, MS, MS));
        assertEquals("a", policy.select(paths, 0).name());
        assertEquals("b", policy.select(paths, 1).name());
    }

    @Test
    void singleCandidateIsAlwaysChosen() {
        FakePath only = new FakePath("only", 0, 9 * MS, 9 * MS);
        for (long seq = -3; seq < 3; seq++) {
            assertSame(only, policy.select(List.of(only), seq));
        }
    }
}

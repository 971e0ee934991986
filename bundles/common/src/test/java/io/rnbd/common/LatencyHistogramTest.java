package io.rnbd.common;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class LatencyHistogramTest {

    @Test
    void countsEachLatencyInTheFirstBucketWhoseBoundHoldsIt() {
        LatencyHistogram h = new LatencyHistogram();
        long[] bounds = LatencyHistogram.boundsNanos();
        h.record(bounds[0]);          // on the first bound: bucket 0 (bounds are inclusive)
        h.record(bounds[0] + 1);      // just above: bucket 1
        h.record(bounds[3] - 1);      // below the fourth bound: bucket 3
        h.record(bounds[bounds.length - 1] + 1); // beyond the last bound: the open bucket
        h.record(-7);                 // a clock step backwards counts as 0
        LatencyHistogram.Snapshot s = h.snapshot();
        long[] expected = new long[bounds.length + 1];
        expected[0] = 2;
        expected[1] = 1;
        expected[3] = 1;
        expected[bounds.length] = 1;
        assertArrayEquals(expected, s.counts());
        assertEquals(5, s.count());
        assertEquals(bounds[0] + bounds[0] + 1 + bounds[3] - 1 + bounds[bounds.length - 1] + 1, s.sumNanos());
    }

    @Test
    void boundsRiseFromMicrosecondsToSeconds() {
        long[] b = LatencyHistogram.boundsNanos();
        assertEquals(5_000, b[0]);
        assertEquals(10_000_000_000L, b[b.length - 1]);
        for (int i = 1; i < b.length; i++) {
            if (b[i] <= b[i - 1]) {
                throw new AssertionError("bounds not rising at " + i);
            }
        }
    }

    @Test
    void resetZeroesAndSnapshotsAreCopies() {
        LatencyHistogram h = new LatencyHistogram();
        h.record(30_000);
        LatencyHistogram.Snapshot before = h.snapshot();
        before.counts()[0] = 99; // a copy: the snapshot stays as taken
        assertEquals(1, before.count());
        h.reset();
        assertEquals(LatencyHistogram.EMPTY, h.snapshot());
        assertEquals(1, before.count());
    }

    @Test
    void aSnapshotMustHaveEveryBucket() {
        assertThrows(IllegalArgumentException.class, () -> new LatencyHistogram.Snapshot(new long[3], 0));
    }
}

package io.rnbd.common;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class LatencyHistogramTest {

    @Test
    void countsEachLatencyInTheFirstBucketWhoseBoundHoldsIt() {
        LatencyHistogram h = new LatencyHistogram();
        long[] bounds = LatencyHistogram.boundsNanos();
        h.record(bounds[0]);          // on the first bound: bucket 0 (bounds are inclusive)
        h.record(bounds[0] * 101 / 100); // 1 % above: bucket 1
        h.record(bounds[3] * 99 / 100);  // 1 % below the fourth bound: bucket 3
        h.record(bounds[bounds.length - 1] * 2); // beyond the last bound: the open bucket
        h.record(-7);                 // a clock step backwards counts as 0
        LatencyHistogram.Snapshot s = h.snapshot();
        long[] expected = new long[bounds.length + 1];
        expected[0] = 2;
        expected[1] = 1;
        expected[3] = 1;
        expected[bounds.length] = 1;
        assertArrayEquals(expected, s.counts());
        assertEquals(5, s.count());
        assertEquals(bounds[0] + bounds[0] * 101 / 100 + bounds[3] * 99 / 100 + bounds[bounds.length - 1] * 2,
                s.sumNanos(), "the sum is exact");
    }

    /**
     * A bound is told apart from the values above it to HdrHistogram's precision: what shares
     * the bound's HdrHistogram bucket (less than 1/128 above it) counts as at most the bound,
     * the next bucket's first value does not. Every value lands in exactly one fixed bucket.
     */
    @Test
    void aBoundHoldsWhatHdrHistogramCannotTellFromItAndNothingBeyond() {
        long[] bounds = LatencyHistogram.boundsNanos();
        Histogram shape = new Histogram(1, LatencyHistogram.HIGHEST_NANOS, LatencyHistogram.SIGNIFICANT_DIGITS);
        for (int i = 0; i < bounds.length; i++) {
            long b = bounds[i];
            long firstAbove = shape.nextNonEquivalentValue(b);
            assertTrue(firstAbove > b && firstAbove - b <= b / 128 + 1, "bound " + b + " holds values up to "
                    + (firstAbove - 1));
            LatencyHistogram h = new LatencyHistogram();
            h.record(firstAbove - 1);
            h.record(firstAbove);
            long[] c = h.snapshot().counts();
            assertEquals(1, c[i], "bound " + b);
            assertEquals(1, c[i + 1], "bound " + b);
            assertEquals(2, h.snapshot().count());
        }
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
        LatencyHistogram.Distribution all = h.distribution();
        before.counts()[0] = 99; // a copy: the snapshot stays as taken
        assertEquals(1, before.count());
        h.reset();
        assertEquals(LatencyHistogram.EMPTY, h.snapshot());
        assertEquals(0, h.distribution().count());
        assertEquals(1, before.count());
        assertEquals(1, all.count(), "a distribution is a copy too");
    }

    @Test
    void aSnapshotMustHaveEveryBucket() {
        assertThrows(IllegalArgumentException.class, () -> new LatencyHistogram.Snapshot(new long[3], 0));
    }

    @Test
    void aLatencyBeyondAnHourCountsAsAnHourInTheBucketsAndExactlyInTheSum() {
        LatencyHistogram h = new LatencyHistogram();
        h.record(Long.MAX_VALUE / 2);
        long[] c = h.snapshot().counts();
        assertEquals(1, c[c.length - 1]);
        assertEquals(Long.MAX_VALUE / 2, h.snapshot().sumNanos());
        long max = h.distribution().maxNanos();
        assertTrue(max >= LatencyHistogram.HIGHEST_NANOS && max <= LatencyHistogram.HIGHEST_NANOS * 129 / 128, "" + max);
    }

    @Test
    void percentilesAreWithinTheBucketErrorOfTheExactOnes() {
        Random rnd = new Random(7);
        long[] values = new long[200_000];
        LatencyHistogram h = new LatencyHistogram();
        for (int i = 0; i < values.length; i++) {
            // log-normal around 50 us with a long tail, like IO latencies
            values[i] = (long) Math.exp(Math.log(50_000) + rnd.nextGaussian() * 0.8);
            h.record(values[i]);
        }
        Arrays.sort(values);
        LatencyHistogram.Distribution d = h.distribution();
        assertEquals(values.length, d.count());
        for (double p : new double[] {0.5, 0.9, 0.99, 0.999, 0.9999}) {
            long exact = values[(int) Math.ceil(p * values.length) - 1];
            long est = d.percentileNanos(p);
            assertTrue(Math.abs(est - exact) <= exact / 64, "p" + p * 100 + ": " + est + " vs exact " + exact);
        }
        long min = values[0];
        long max = values[values.length - 1];
        assertTrue(d.minNanos() <= min && min - d.minNanos() <= min / 128, d.minNanos() + " vs " + min);
        assertTrue(d.maxNanos() >= max && d.maxNanos() - max <= max / 128, d.maxNanos() + " vs " + max);
        assertEquals(d.maxNanos(), d.percentileNanos(1.0), "p100 is the maximum");
        assertEquals((double) Arrays.stream(values).sum() / values.length, d.meanNanos(), 1e-6, "the mean is exact");
    }

    @Test
    void smallValuesAreExact() {
        LatencyHistogram h = new LatencyHistogram();
        for (int v = 1; v <= 100; v++) {
            h.record(v);
        }
        LatencyHistogram.Distribution d = h.distribution();
        assertEquals(50, d.percentileNanos(0.5));
        assertEquals(99, d.percentileNanos(0.99));
        assertEquals(1, d.minNanos());
        assertEquals(100, d.maxNanos());
        assertEquals(50.5, d.meanNanos(), 1e-9);
    }

    @Test
    void emptyAndMerged() {
        LatencyHistogram a = new LatencyHistogram();
        LatencyHistogram b = new LatencyHistogram();
        LatencyHistogram.Distribution empty = a.distribution();
        assertEquals(0, empty.percentileNanos(0.99));
        assertEquals(0, empty.minNanos());
        assertEquals(0, empty.maxNanos());
        assertEquals(0, empty.meanNanos());
        a.record(10);
        b.record(200);
        LatencyHistogram.Distribution m = a.distribution().merge(b.distribution());
        assertEquals(2, m.count());
        assertEquals(10, m.minNanos());
        assertEquals(200, m.maxNanos());
        assertEquals(10, m.percentileNanos(0.5));
        assertEquals(105, m.meanNanos(), 1e-9);
        assertEquals(200, empty.merge(b.distribution()).minNanos(), "an empty side changes nothing");
    }
}

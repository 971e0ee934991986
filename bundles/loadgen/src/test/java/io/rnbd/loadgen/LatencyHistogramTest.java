package io.rnbd.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class LatencyHistogramTest {

    @Test
    void bucketsAreContiguousAndEachValueFallsInItsOwn() {
        long[] probes = {0, 1, 63, 64, 127, 128, 129, 255, 256, 1000, 4095, 4096, 123_456_789L, Long.MAX_VALUE};
        for (long v : probes) {
            int b = LatencyHistogram.bucket(v);
            long lo = LatencyHistogram.lowerBound(b);
            assertTrue(lo <= v && v - lo < LatencyHistogram.width(b), v + " in bucket " + b + " from " + lo);
            assertTrue(b < LatencyHistogram.BUCKETS);
        }
        for (int b = 1; b <= LatencyHistogram.bucket(Long.MAX_VALUE); b++) {
            assertEquals(LatencyHistogram.lowerBound(b - 1) + LatencyHistogram.width(b - 1),
                    LatencyHistogram.lowerBound(b), "bucket " + b + " starts where " + (b - 1) + " ends");
        }
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
        LatencyHistogram.Snapshot s = h.snapshot();
        assertEquals(values.length, s.count());
        for (double p : new double[] {0.5, 0.9, 0.99, 0.999, 0.9999}) {
            long exact = values[(int) Math.ceil(p * values.length) - 1];
            long est = s.percentileNanos(p);
            assertTrue(Math.abs(est - exact) <= exact / 64, "p" + p * 100 + ": " + est + " vs exact " + exact);
        }
        assertEquals(values[0], s.minNanos());
        assertEquals(values[values.length - 1], s.maxNanos());
        assertEquals(values[values.length - 1], s.percentileNanos(1.0), "clamped to the real max");
    }

    @Test
    void smallValuesAreExact() {
        LatencyHistogram h = new LatencyHistogram();
        for (int v = 1; v <= 100; v++) {
            h.record(v);
        }
        LatencyHistogram.Snapshot s = h.snapshot();
        assertEquals(50, s.percentileNanos(0.5));
        assertEquals(99, s.percentileNanos(0.99));
        assertEquals(50.5, s.meanNanos(), 1e-9);
    }

    @Test
    void emptyAndMergedAndReset() {
        LatencyHistogram a = new LatencyHistogram();
        LatencyHistogram b = new LatencyHistogram();
        assertEquals(0, a.snapshot().percentileNanos(0.99));
        assertEquals(0, a.snapshot().minNanos());
        a.record(10);
        b.record(1_000_000);
        LatencyHistogram.Snapshot m = a.snapshot().merge(b.snapshot());
        assertEquals(2, m.count());
        assertEquals(10, m.minNanos());
        assertEquals(1_000_000, m.maxNanos());
        assertEquals(10, m.percentileNanos(0.5));
        a.reset();
        assertEquals(0, a.snapshot().count());
        assertEquals(1_000_000, a.snapshot().merge(b.snapshot()).minNanos());
    }
}

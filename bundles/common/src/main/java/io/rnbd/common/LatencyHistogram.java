package io.rnbd.common;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.AbstractHistogram;
import org.HdrHistogram.AtomicHistogram;
import org.HdrHistogram.Histogram;

/**
 * Completion latencies, for the IO statistics of every layer (RTRS paths, RNBD exports and
 * devices) and the load generator. It lives here, at the bottom, because both rtrs-api and
 * rnbd-api carry its {@link Snapshot} and neither depends on the other.
 *
 * <p>The latencies go into one HdrHistogram ({@link AtomicHistogram}, sized once: 0 to an hour
 * in nanoseconds, two significant digits, so a value shares its bucket only with values within
 * 1/128 of it; about 36 KiB). Two views of it:
 * <ul>
 * <li>{@link #snapshot()}: counts in fixed buckets, 5 µs to 10 s in 1-2.5-5 steps, so that
 *     snapshots of any two histograms add up and a scraper (Prometheus, the dashboard, JMX) can
 *     subtract one from the next. A bucket "at most B" counts what HdrHistogram cannot tell
 *     from B: values up to the end of B's HdrHistogram bucket, less than 0.8 % above B;</li>
 * <li>{@link #distribution()}: every bucket, for percentiles (the load generator's p50, p99).</li>
 * </ul>
 *
 * <p>Recording is thread-safe and allocates nothing: HdrHistogram's index arithmetic (a
 * leading-zero count and two shifts, where the fixed buckets needed a binary search), two
 * atomic increments (the bucket, HdrHistogram's total) and one {@link LongAdder} add for the
 * exact sum; the maximum and minimum are compare-and-set only when a value beats them. A
 * latency beyond an hour counts as an hour in the buckets (the IO timeouts are long past it),
 * and exactly in the sum.
 */
public final class LatencyHistogram {
    /** Upper bounds of the fixed buckets, inclusive, in nanoseconds; a last bucket takes the rest. */
    private static final long[] BOUNDS_NANOS = {
        5_000L, 10_000L, 25_000L, 50_000L, 100_000L, 250_000L, 500_000L,
        1_000_000L, 2_500_000L, 5_000_000L, 10_000_000L, 25_000_000L, 50_000_000L, 100_000_000L,
        250_000_000L, 500_000_000L, 1_000_000_000L, 2_500_000_000L, 5_000_000_000L, 10_000_000_000L,
    };

    /** The longest latency told apart; longer ones are recorded as this. */
    static final long HIGHEST_NANOS = TimeUnit.HOURS.toNanos(1);
    /** HdrHistogram's precision: a bucket spans at most 1/128 of its values. */
    static final int SIGNIFICANT_DIGITS = 2;

    /**
     * Where each fixed bucket starts and ends in HdrHistogram's buckets: {@code [LOW[i], HIGH[i]]}
     * for {@link AbstractHistogram#getCountBetweenValues}, which rounds both to whole buckets.
     * Together they cover every value once.
     */
    private static final long[] LOW = new long[BOUNDS_NANOS.length + 1];
    private static final long[] HIGH = new long[BOUNDS_NANOS.length + 1];

    static {
        Histogram shape = newHistogram();
        for (int i = 0; i <= BOUNDS_NANOS.length; i++) {
            LOW[i] = i == 0 ? 0 : shape.nextNonEquivalentValue(BOUNDS_NANOS[i - 1]);
            HIGH[i] = i < BOUNDS_NANOS.length ? BOUNDS_NANOS[i] : HIGHEST_NANOS;
        }
    }

    /** A histogram that never recorded anything. */
    public static final Snapshot EMPTY = new Snapshot(new long[BOUNDS_NANOS.length + 1], 0);

    private final AtomicHistogram histogram = new AtomicHistogram(1, HIGHEST_NANOS, SIGNIFICANT_DIGITS);
    private final LongAdder sumNanos = new LongAdder();

    private static Histogram newHistogram() {
        return new Histogram(1, HIGHEST_NANOS, SIGNIFICANT_DIGITS);
    }

    /** The fixed buckets' bounds in nanoseconds (a copy), without the open last bucket. */
    public static long[] boundsNanos() {
        return BOUNDS_NANOS.clone();
    }

    /** Count one completion that took {@code nanos}; negative values (a clock step) count as 0. */
    public void record(long nanos) {
        long n = Math.max(0, nanos);
        histogram.recordValue(Math.min(n, HIGHEST_NANOS));
        sumNanos.add(n);
    }

    /** The fixed buckets now: what scrapers add up and subtract. */
    public Snapshot snapshot() {
        long[] counts = new long[BOUNDS_NANOS.length + 1];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = histogram.getCountBetweenValues(LOW[i], HIGH[i]);
        }
        return new Snapshot(counts, sumNanos.sum());
    }

    /** Every bucket now, copied: for percentiles. */
    public Distribution distribution() {
        Histogram copy = newHistogram();
        copy.add(histogram);
        return new Distribution(copy, sumNanos.sum());
    }

    public void reset() {
        histogram.reset();
        sumNanos.reset();
    }

    /**
     * A point-in-time copy in the fixed buckets.
     *
     * @param counts   completions per bucket (not cumulative), one more than {@link #boundsNanos()}:
     *                 {@code counts[i]} took at most {@code boundsNanos()[i]} and more than the
     *                 bound before (to HdrHistogram's precision: see {@link LatencyHistogram});
     *                 the last entry counts those above the last bound
     * @param sumNanos the total of all recorded latencies
     */
    public record Snapshot(long[] counts, long sumNanos) {
        public Snapshot {
            if (counts.length != BOUNDS_NANOS.length + 1) {
                throw new IllegalArgumentException("expected " + (BOUNDS_NANOS.length + 1) + " buckets, not "
                        + counts.length);
            }
            counts = counts.clone();
        }

        @Override
        public long[] counts() {
            return counts.clone();
        }

        /** How many completions were recorded. */
        public long count() {
            long c = 0;
            for (long n : counts) {
                c += n;
            }
            return c;
        }

        /** Upper bounds of the buckets in nanoseconds, as {@link LatencyHistogram#boundsNanos()}. */
        public long[] boundsNanos() {
            return BOUNDS_NANOS.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Snapshot s && s.sumNanos == sumNanos && Arrays.equals(s.counts, counts);
        }

        @Override
        public int hashCode() {
            return 31 * Arrays.hashCode(counts) + Long.hashCode(sumNanos);
        }

        @Override
        public String toString() {
            return "Snapshot[count=" + count() + ", sumNanos=" + sumNanos + ", counts=" + Arrays.toString(counts) + "]";
        }
    }

    /**
     * Every latency of a histogram at full resolution, copied at one moment: percentiles,
     * extremes and the mean. Percentiles, the minimum and the maximum are HdrHistogram's: exact
     * below 256 ns, else within 1/128 (a percentile and the maximum are the highest value of
     * their bucket, the minimum the lowest); the mean is exact.
     */
    public static final class Distribution {
        private final Histogram histogram;
        private final long sumNanos;

        private Distribution(Histogram histogram, long sumNanos) {
            this.histogram = histogram;
            this.sumNanos = sumNanos;
        }

        public long count() {
            return histogram.getTotalCount();
        }

        /** 0 when empty. */
        public long minNanos() {
            return histogram.getMinValue();
        }

        /** 0 when empty. */
        public long maxNanos() {
            return histogram.getMaxValue();
        }

        public double meanNanos() {
            long n = count();
            return n == 0 ? 0 : (double) sumNanos / n;
        }

        /** The latency at or below which {@code fraction} (0..1) of the completions fall; 0 if empty. */
        public long percentileNanos(double fraction) {
            return histogram.getValueAtPercentile(fraction * 100);
        }

        /** Both together (a run's reads and writes). */
        public Distribution merge(Distribution other) {
            Histogram sum = newHistogram();
            sum.add(histogram);
            sum.add(other.histogram);
            return new Distribution(sum, sumNanos + other.sumNanos);
        }

        @Override
        public String toString() {
            return "Distribution[count=" + count() + ", p50=" + percentileNanos(0.5) + ", p99=" + percentileNanos(0.99)
                    + ", max=" + maxNanos() + "]";
        }
    }
}

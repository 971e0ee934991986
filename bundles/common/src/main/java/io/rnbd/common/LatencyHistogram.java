package io.rnbd.common;

import java.util.Arrays;
import java.util.concurrent.atomic.LongAdder;

/**
 * Completion latencies counted in fixed buckets, for the IO statistics of the layers above
 * (RTRS paths, RNBD exports and devices). It lives here, at the bottom, because both
 * rtrs-api and rnbd-api carry its {@link Snapshot} and neither depends on the other.
 *
 * <p>The bounds are fixed so that snapshots of any two histograms add up and a scraper
 * (Prometheus, a dashboard) can subtract one snapshot from the next: 5 µs to 10 s in 1-2.5-5
 * steps, the range between a loopback RDMA round trip and a hung backend. Recording is two
 * {@link LongAdder} increments after a binary search over 20 bounds; nothing is allocated.
 */
public final class LatencyHistogram {
    /** Upper bounds of the buckets, inclusive, in nanoseconds; a last bucket takes the rest. */
    private static final long[] BOUNDS_NANOS = {
        5_000L, 10_000L, 25_000L, 50_000L, 100_000L, 250_000L, 500_000L,
        1_000_000L, 2_500_000L, 5_000_000L, 10_000_000L, 25_000_000L, 50_000_000L, 100_000_000L,
        250_000_000L, 500_000_000L, 1_000_000_000L, 2_500_000_000L, 5_000_000_000L, 10_000_000_000L,
    };

    /** A histogram that never recorded anything. */
    public static final Snapshot EMPTY = new Snapshot(new long[BOUNDS_NANOS.length + 1], 0);

    private final LongAdder[] buckets = new LongAdder[BOUNDS_NANOS.length + 1];
    private final LongAdder sumNanos = new LongAdder();

    public LatencyHistogram() {
        for (int i = 0; i < buckets.length; i++) {
            buckets[i] = new LongAdder();
        }
    }

    /** The bucket bounds in nanoseconds (a copy), without the open last bucket. */
    public static long[] boundsNanos() {
        return BOUNDS_NANOS.clone();
    }

    /** Count one completion that took {@code nanos}; negative values (a clock step) count as 0. */
    public void record(long nanos) {
        long n = Math.max(0, nanos);
        int i = Arrays.binarySearch(BOUNDS_NANOS, n);
        buckets[i >= 0 ? i : -i - 1].increment();
        sumNanos.add(n);
    }

    public Snapshot snapshot() {
        long[] counts = new long[buckets.length];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = buckets[i].sum();
        }
        return new Snapshot(counts, sumNanos.sum());
    }

    public void reset() {
        for (LongAdder b : buckets) {
            b.reset();
        }
        sumNanos.reset();
    }

    /**
     * A point-in-time copy.
     *
     * @param counts   completions per bucket (not cumulative), one more than {@link #boundsNanos()}:
     *                 {@code counts[i]} took at most {@code boundsNanos()[i]} and more than the
     *                 bound before; the last entry counts those above the last bound
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
}

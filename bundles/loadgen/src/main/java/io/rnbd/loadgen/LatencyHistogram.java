package io.rnbd.loadgen;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;

/**
 * A fixed-bucket log-linear histogram of nanosecond latencies (the HdrHistogram layout with 64
 * sub-buckets per power of two): values below 128 have a bucket each, above that every bucket
 * spans at most 1/64 of its lower bound, so a percentile is off by at most ~0.8 % (half a
 * bucket). 3712 buckets cover every long; recording is one atomic increment, no lock.
 */
public final class LatencyHistogram {
    static final int SUB_BITS = 6;
    static final int SUB = 1 << SUB_BITS;
    static final int BUCKETS = (63 - SUB_BITS) * SUB + 2 * SUB;

    private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);
    private final LongAdder sum = new LongAdder();
    private final LongAccumulator max = new LongAccumulator(Math::max, 0);
    private final LongAccumulator min = new LongAccumulator(Math::min, Long.MAX_VALUE);

    public void record(long nanos) {
        long v = Math.max(0, nanos);
        counts.incrementAndGet(bucket(v));
        sum.add(v);
        max.accumulate(v);
        min.accumulate(v);
    }

    public void reset() {
        for (int i = 0; i < BUCKETS; i++) {
            counts.set(i, 0);
        }
        sum.reset();
        max.reset();
        min.reset();
    }

    static int bucket(long v) {
        if (v < 2 * SUB) {
            return (int) v;
        }
        int shift = 63 - Long.numberOfLeadingZeros(v) - SUB_BITS;
        return (shift << SUB_BITS) + (int) (v >>> shift);
    }

    static long lowerBound(int bucket) {
        if (bucket < 2 * SUB) {
            return bucket;
        }
        int shift = (bucket >>> SUB_BITS) - 1;
        long m = (bucket & (SUB - 1)) + SUB;
        return m << shift;
    }

    static long width(int bucket) {
        return bucket < 2 * SUB ? 1 : 1L << ((bucket >>> SUB_BITS) - 1);
    }

    public Snapshot snapshot() {
        long[] c = new long[BUCKETS];
        for (int i = 0; i < BUCKETS; i++) {
            c[i] = counts.get(i);
        }
        return new Snapshot(c, sum.sum(), min.get(), max.get());
    }

    /** A copy of the counts; percentiles are the middle of the bucket holding the rank. */
    public static final class Snapshot {
        private final long[] counts;
        private final long count;
        private final long sum;
        private final long min;
        private final long max;

        Snapshot(long[] counts, long sum, long min, long max) {
            this.counts = counts;
            long n = 0;
            for (long c : counts) {
                n += c;
            }
            this.count = n;
            this.sum = sum;
            this.min = n == 0 ? 0 : min;
            this.max = max;
        }

        public long count() {
            return count;
        }

        public long minNanos() {
            return min;
        }

        public long maxNanos() {
            return max;
        }

        public double meanNanos() {
            return count == 0 ? 0 : (double) sum / count;
        }

        /** The latency below which {@code fraction} (0..1) of the samples fall; 0 if empty. */
        public long percentileNanos(double fraction) {
            if (count == 0) {
                return 0;
            }
            long rank = Math.max(1, (long) Math.ceil(fraction * count));
            if (rank >= count) {
                return max;
            }
            long seen = 0;
            for (int i = 0; i < counts.length; i++) {
                seen += counts[i];
                if (seen >= rank) {
                    long mid = lowerBound(i) + (width(i) - 1) / 2;
                    return Math.max(min, Math.min(max, mid));
                }
            }
            return max;
        }

        public Snapshot merge(Snapshot other) {
            long[] c = new long[BUCKETS];
            for (int i = 0; i < BUCKETS; i++) {
                c[i] = counts[i] + other.counts[i];
            }
            long mn = count == 0 ? other.min : other.count == 0 ? min : Math.min(min, other.min);
            return new Snapshot(c, sum + other.sum, mn, Math.max(max, other.max));
        }
    }
}

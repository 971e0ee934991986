package io.rnbd.loadgen;

import io.rnbd.common.LatencyHistogram;
import java.util.concurrent.atomic.LongAdder;

/** Counters and latency histograms of a load run, kept apart from the engine. */
public final class LoadStats {
    private final LongAdder reads = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder readBytes = new LongAdder();
    private final LongAdder writeBytes = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private final LongAdder mismatches = new LongAdder();
    private final LongAdder verified = new LongAdder();
    private final LatencyHistogram readLatency = new LatencyHistogram();
    private final LatencyHistogram writeLatency = new LatencyHistogram();

    void read(int bytes, long nanos) {
        reads.increment();
        readBytes.add(bytes);
        readLatency.record(nanos);
    }

    void write(int bytes, long nanos) {
        writes.increment();
        writeBytes.add(bytes);
        writeLatency.record(nanos);
    }

    void error() {
        errors.increment();
    }

    void verified(boolean ok) {
        verified.increment();
        if (!ok) {
            mismatches.increment();
        }
    }

    long errors() {
        return errors.sum();
    }

    public void reset() {
        for (LongAdder a : new LongAdder[] {reads, writes, readBytes, writeBytes, errors, mismatches, verified}) {
            a.reset();
        }
        readLatency.reset();
        writeLatency.reset();
    }

    /** Counters only: cheap enough for the progress line. */
    public Counters counters() {
        return new Counters(reads.sum(), writes.sum(), readBytes.sum(), writeBytes.sum(), errors.sum(),
                verified.sum(), mismatches.sum());
    }

    public LatencyHistogram.Distribution readLatency() {
        return readLatency.distribution();
    }

    public LatencyHistogram.Distribution writeLatency() {
        return writeLatency.distribution();
    }

    /** @param verified reads checked against the pattern (of blocks written in this run) */
    public record Counters(long reads, long writes, long readBytes, long writeBytes, long errors, long verified,
                           long mismatches) {
        public long ios() {
            return reads + writes;
        }

        public long bytes() {
            return readBytes + writeBytes;
        }
    }
}

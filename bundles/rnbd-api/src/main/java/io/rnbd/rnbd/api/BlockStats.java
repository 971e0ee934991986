package io.rnbd.rnbd.api;

import io.rnbd.common.LatencyHistogram;
import java.util.concurrent.atomic.LongAdder;

/** Live IO counters of an export or a mapped device; {@link #snapshot()} for admin views. */
public final class BlockStats {
    private final LongAdder reads = new LongAdder();
    private final LongAdder readBytes = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder writeBytes = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private final LongAdder inflight = new LongAdder();
    private final LatencyHistogram latency = new LatencyHistogram();
    private final LongAdder timeouts = new LongAdder();
    private final LongAdder unknown = new LongAdder();

    public void started() {
        inflight.increment();
    }

    public void finished() {
        inflight.decrement();
    }

    public void read(long bytes) {
        reads.increment();
        readBytes.add(bytes);
    }

    public void wrote(long bytes) {
        writes.increment();
        writeBytes.add(bytes);
    }

    /** A request finished (well or not) {@code nanos} after it started. */
    public void latency(long nanos) {
        latency.record(nanos);
    }

    /** The backend held a request beyond the server's backend.timeout.ms. */
    public void timeout() {
        timeouts.increment();
    }

    /** A message carried an op or bits this side does not know (see {@link BlockIoStats#unknown}). */
    public void unknown() {
        unknown.increment();
    }

    public void error() {
        errors.increment();
    }

    public long inflight() {
        return inflight.sum();
    }

    /** Zero the counters; inflight stays, it is a level, not a count. */
    public void reset() {
        reads.reset();
        readBytes.reset();
        writes.reset();
        writeBytes.reset();
        errors.reset();
        latency.reset();
        timeouts.reset();
        unknown.reset();
    }

    public BlockIoStats snapshot() {
        return new BlockIoStats(reads.sum(), readBytes.sum(), writes.sum(), writeBytes.sum(), errors.sum(),
                inflight.sum(), latency.snapshot(), timeouts.sum(), unknown.sum());
    }
}

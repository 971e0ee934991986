package io.rnbd.rnbd.server;

import io.rnbd.rnbd.api.BlockIoStats;
import java.util.concurrent.atomic.LongAdder;

/** IO counters of one export. */
public final class ExportStats {
    private final LongAdder reads = new LongAdder();
    private final LongAdder readBytes = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder writeBytes = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private final LongAdder inflight = new LongAdder();

    void started() {
        inflight.increment();
    }

    void finished() {
        inflight.decrement();
    }

    void read(long bytes) {
        reads.increment();
        readBytes.add(bytes);
    }

    void wrote(long bytes) {
        writes.increment();
        writeBytes.add(bytes);
    }

    void error() {
        errors.increment();
    }

    /** Zero the counters; inflight stays, it is a level, not a count. */
    public void reset() {
        reads.reset();
        readBytes.reset();
        writes.reset();
        writeBytes.reset();
        errors.reset();
    }

    public BlockIoStats snapshot() {
        return new BlockIoStats(reads.sum(), readBytes.sum(), writes.sum(), writeBytes.sum(), errors.sum(),
                inflight.sum());
    }
}

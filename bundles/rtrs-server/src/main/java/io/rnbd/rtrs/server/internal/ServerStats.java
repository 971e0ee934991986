package io.rnbd.rtrs.server.internal;

import io.rnbd.rtrs.api.RtrsIoStats;

import java.util.concurrent.atomic.LongAdder;

/** Per-session IO counters (the kernel's rtrs-srv-stats). */
public final class ServerStats {
    private final LongAdder reads = new LongAdder();
    private final LongAdder readBytes = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder writeBytes = new LongAdder();
    private final LongAdder inflight = new LongAdder();
    private final LongAdder rejected = new LongAdder();
    private final LongAdder failedOver = new LongAdder();

    void started(boolean write, int bytes) {
        (write ? writes : reads).increment();
        (write ? writeBytes : readBytes).add(bytes);
        inflight.increment();
    }

    void finished() {
        inflight.decrement();
    }

    void rejected() {
        rejected.increment();
    }

    void failedOver() {
        failedOver.increment();
    }

    /**
     * Requests a client sent again on another path while this server still ran them there
     * (failover with the same permit): each waited for its first copy (ServerIo.onIoReq).
     */
    public long failedOverCount() {
        return failedOver.sum();
    }

    /** Requests refused before reaching the upper layer (malformed, fenced). */
    public long rejectedCount() {
        return rejected.sum();
    }

    public RtrsIoStats snapshot() {
        return new RtrsIoStats(reads.sum(), readBytes.sum(), writes.sum(), writeBytes.sum(), inflight.sum());
    }

    public void reset() {
        reads.reset();
        readBytes.reset();
        writes.reset();
        writeBytes.reset();
        rejected.reset();
        failedOver.reset();
    }
}

package io.rnbd.rtrs.client.internal;

import io.rnbd.common.LatencyHistogram;
import io.rnbd.rtrs.api.RtrsIoStats;
import io.rnbd.rtrs.api.RtrsPathStats;

import java.util.concurrent.atomic.LongAdder;

/** A client path's counters (the kernel's rtrs-clt-stats). */
public final class PathStats {
    private final LongAdder reads = new LongAdder();
    private final LongAdder readBytes = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder writeBytes = new LongAdder();
    private final LongAdder failovers = new LongAdder();
    private final LongAdder reconnectsOk = new LongAdder();
    private final LongAdder reconnectsFailed = new LongAdder();
    private final LongAdder requestTimeouts = new LongAdder();
    private final LatencyHistogram ioLatency = new LatencyHistogram();

    void io(boolean write, int bytes) {
        (write ? writes : reads).increment();
        (write ? writeBytes : readBytes).add(bytes);
    }

    void latency(long nanos) {
        ioLatency.record(nanos);
    }

    void failovers(int n) {
        failovers.add(n);
    }

    void requestTimeout() {
        requestTimeouts.increment();
    }

    void reconnect(boolean ok) {
        (ok ? reconnectsOk : reconnectsFailed).increment();
    }

    public RtrsPathStats snapshot(int inflight, long rtt, long ioLatency) {
        return new RtrsPathStats(new RtrsIoStats(reads.sum(), readBytes.sum(), writes.sum(), writeBytes.sum(), inflight),
                failovers.sum(), reconnectsOk.sum(), reconnectsFailed.sum(), rtt, ioLatency, this.ioLatency.snapshot(),
                requestTimeouts.sum());
    }

    public void reset() {
        reads.reset();
        readBytes.reset();
        writes.reset();
        writeBytes.reset();
        failovers.reset();
        reconnectsOk.reset();
        reconnectsFailed.reset();
        requestTimeouts.reset();
        ioLatency.reset();
    }
}

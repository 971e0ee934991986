package io.rnbd.rnbd.api;

import io.rnbd.common.LatencyHistogram;

/**
 * A snapshot of IO counters of an export or a mapped device.
 *
 * @param inflight requests started and not yet answered
 * @param latency  every finished request's latency from start to answer (failed ones too)
 * @param timeouts requests the backend held beyond the server's backend.timeout.ms, answered
 *                 with ETIMEDOUT (exports only)
 */
public record BlockIoStats(long reads, long readBytes, long writes, long writeBytes, long errors,
                           long inflight, LatencyHistogram.Snapshot latency, long timeouts) {
    public static final BlockIoStats ZERO = new BlockIoStats(0, 0, 0, 0, 0, 0);

    public BlockIoStats {
        latency = latency == null ? LatencyHistogram.EMPTY : latency;
    }

    /** Counters without a latency histogram or timeouts. */
    public BlockIoStats(long reads, long readBytes, long writes, long writeBytes, long errors, long inflight) {
        this(reads, readBytes, writes, writeBytes, errors, inflight, LatencyHistogram.EMPTY, 0);
    }

    /** Counters with a latency histogram, without timeouts. */
    public BlockIoStats(long reads, long readBytes, long writes, long writeBytes, long errors, long inflight,
                        LatencyHistogram.Snapshot latency) {
        this(reads, readBytes, writes, writeBytes, errors, inflight, latency, 0);
    }
}

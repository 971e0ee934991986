package io.rnbd.rnbd.api;

import io.rnbd.common.LatencyHistogram;

/**
 * A snapshot of IO counters of an export or a mapped device.
 *
 * @param inflight requests started and not yet answered
 * @param latency  every finished request's latency from start to answer (failed ones too)
 * @param timeouts requests the backend held beyond the server's backend.timeout.ms (exports
 *                 only; each is still answered when the backend gives it back)
 * @param unknown  messages that carried what this side does not know and went on as Linux goes
 *                 on: on an export, IO requests with unknown flag bits (ignored) or an unknown op
 *                 (answered EOPNOTSUPP); on a mapped device, OPEN answers with unknown
 *                 cache_policy bits (ignored). A peer newer than this appliance shows here.
 */
public record BlockIoStats(long reads, long readBytes, long writes, long writeBytes, long errors,
                           long inflight, LatencyHistogram.Snapshot latency, long timeouts, long unknown) {
    public static final BlockIoStats ZERO = new BlockIoStats(0, 0, 0, 0, 0, 0);

    public BlockIoStats {
        latency = latency == null ? LatencyHistogram.EMPTY : latency;
    }

    /** Counters without the count of unknown bits. */
    public BlockIoStats(long reads, long readBytes, long writes, long writeBytes, long errors, long inflight,
                        LatencyHistogram.Snapshot latency, long timeouts) {
        this(reads, readBytes, writes, writeBytes, errors, inflight, latency, timeouts, 0);
    }

    /** Counters without a latency histogram or timeouts. */
    public BlockIoStats(long reads, long readBytes, long writes, long writeBytes, long errors, long inflight) {
        this(reads, readBytes, writes, writeBytes, errors, inflight, LatencyHistogram.EMPTY, 0, 0);
    }

    /** Counters with a latency histogram, without timeouts. */
    public BlockIoStats(long reads, long readBytes, long writes, long writeBytes, long errors, long inflight,
                        LatencyHistogram.Snapshot latency) {
        this(reads, readBytes, writes, writeBytes, errors, inflight, latency, 0, 0);
    }
}

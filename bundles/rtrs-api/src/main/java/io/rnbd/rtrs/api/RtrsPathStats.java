package io.rnbd.rtrs.api;

import io.rnbd.common.LatencyHistogram;

/**
 * A client path's counters: IO moved, failovers away from this path, reconnects, the
 * latencies a min-latency policy would look at, and how often a request went unanswered
 * for the session's request timeout (each time failing the path).
 *
 * @param ioLatencyNanos     the smoothed IO latency (a moving average, what min-latency compares)
 * @param ioLatencyHistogram every IO's latency from post to response, for scrapers that need
 *                           percentiles and rates (JMX, /metrics, the dashboard)
 */
public record RtrsPathStats(RtrsIoStats io, long failovers, long reconnectsOk, long reconnectsFailed,
                            long heartbeatRttNanos, long ioLatencyNanos,
                            LatencyHistogram.Snapshot ioLatencyHistogram, long requestTimeouts) {
    public RtrsPathStats {
        ioLatencyHistogram = ioLatencyHistogram == null ? LatencyHistogram.EMPTY : ioLatencyHistogram;
    }

    /** Counters without a latency histogram or timeouts. */
    public RtrsPathStats(RtrsIoStats io, long failovers, long reconnectsOk, long reconnectsFailed,
                         long heartbeatRttNanos, long ioLatencyNanos) {
        this(io, failovers, reconnectsOk, reconnectsFailed, heartbeatRttNanos, ioLatencyNanos, LatencyHistogram.EMPTY, 0);
    }

    /** Counters with a latency histogram, without timeouts. */
    public RtrsPathStats(RtrsIoStats io, long failovers, long reconnectsOk, long reconnectsFailed,
                         long heartbeatRttNanos, long ioLatencyNanos, LatencyHistogram.Snapshot ioLatencyHistogram) {
        this(io, failovers, reconnectsOk, reconnectsFailed, heartbeatRttNanos, ioLatencyNanos, ioLatencyHistogram, 0);
    }
}

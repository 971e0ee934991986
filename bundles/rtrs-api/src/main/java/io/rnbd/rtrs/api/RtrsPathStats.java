package io.rnbd.rtrs.api;

/**
 * A client path's counters: IO moved, failovers away from this path, reconnects, the
 * latencies a min-latency policy would look at, and how often a request went unanswered
 * for the session's request timeout (each time failing the path).
 */
public record RtrsPathStats(RtrsIoStats io, long failovers, long reconnectsOk, long reconnectsFailed,
                            long heartbeatRttNanos, long ioLatencyNanos, long requestTimeouts) {
    public RtrsPathStats(RtrsIoStats io, long failovers, long reconnectsOk, long reconnectsFailed,
                         long heartbeatRttNanos, long ioLatencyNanos) {
        this(io, failovers, reconnectsOk, reconnectsFailed, heartbeatRttNanos, ioLatencyNanos, 0);
    }
}

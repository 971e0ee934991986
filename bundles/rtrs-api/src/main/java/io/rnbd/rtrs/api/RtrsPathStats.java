package io.rnbd.rtrs.api;

/**
 * A client path's counters: IO moved, failovers away from this path, reconnects, and the
 * latencies a min-latency policy would look at.
 */
public record RtrsPathStats(RtrsIoStats io, long failovers, long reconnectsOk, long reconnectsFailed,
                            long heartbeatRttNanos, long ioLatencyNanos) {
}

package io.rnbd.rtrs.api;

/** What a multipath policy may look at of a client path. Read-only, cheap, live. */
public interface PathView {
    /** "src@dst" */
    String name();

    /** Requests in flight on this path now. */
    int inflight();

    /** Last heartbeat round-trip time in nanoseconds (0 if none measured yet). */
    long heartbeatRttNanos();

    /** Moving average of completed IO latency on this path in nanoseconds (0 if none yet). */
    long ioLatencyNanos();
}

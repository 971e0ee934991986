package io.rnbd.rtrs.api;

/**
 * A snapshot of IO counters (the kernel's stats/rdma): reads and writes as the transport
 * moved them, requests in flight when the snapshot was taken.
 */
public record RtrsIoStats(long reads, long readBytes, long writes, long writeBytes, long inflight) {
}

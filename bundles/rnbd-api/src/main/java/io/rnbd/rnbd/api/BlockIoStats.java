package io.rnbd.rnbd.api;

/**
 * A snapshot of IO counters of an export or a mapped device.
 *
 * @param inflight requests started and not yet answered
 * @param timeouts requests the backend held beyond the server's backend.timeout.ms, answered
 *                 with ETIMEDOUT (exports only)
 */
public record BlockIoStats(long reads, long readBytes, long writes, long writeBytes, long errors,
                           long inflight, long timeouts) {
    public static final BlockIoStats ZERO = new BlockIoStats(0, 0, 0, 0, 0, 0, 0);

    public BlockIoStats(long reads, long readBytes, long writes, long writeBytes, long errors, long inflight) {
        this(reads, readBytes, writes, writeBytes, errors, inflight, 0);
    }
}

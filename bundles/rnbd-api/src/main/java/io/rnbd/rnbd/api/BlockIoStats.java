package io.rnbd.rnbd.api;

/**
 * A snapshot of IO counters of an export or a mapped device.
 *
 * @param inflight requests started and not yet answered
 */
public record BlockIoStats(long reads, long readBytes, long writes, long writeBytes, long errors,
                           long inflight) {
    public static final BlockIoStats ZERO = new BlockIoStats(0, 0, 0, 0, 0, 0);
}

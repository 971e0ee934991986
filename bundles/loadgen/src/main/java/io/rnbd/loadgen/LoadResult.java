package io.rnbd.loadgen;

import io.rnbd.common.LatencyHistogram;
import java.util.List;

/**
 * The outcome of a load run.
 *
 * @param stoppedBy    why it ended: "duration", "io count", "errors", "stopped"
 * @param problems     the first failed IOs and verification mismatches, one line each
 */
public record LoadResult(LoadSpec spec, long elapsedNanos, LoadStats.Counters counters,
                         LatencyHistogram.Distribution readLatency, LatencyHistogram.Distribution writeLatency,
                         String stoppedBy, List<String> problems) {

    public LatencyHistogram.Distribution latency() {
        return readLatency.merge(writeLatency);
    }

    public double seconds() {
        return elapsedNanos / 1e9;
    }

    public double iops() {
        return rate(counters.ios());
    }

    public double readIops() {
        return rate(counters.reads());
    }

    public double writeIops() {
        return rate(counters.writes());
    }

    public double mibPerSecond() {
        return rate(counters.bytes()) / (1 << 20);
    }

    public double readMibPerSecond() {
        return rate(counters.readBytes()) / (1 << 20);
    }

    public double writeMibPerSecond() {
        return rate(counters.writeBytes()) / (1 << 20);
    }

    private double rate(long n) {
        return elapsedNanos <= 0 ? 0 : n * 1e9 / elapsedNanos;
    }
}

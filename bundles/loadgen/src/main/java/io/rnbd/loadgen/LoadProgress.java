package io.rnbd.loadgen;

/**
 * Once a second while a load runs.
 *
 * @param elapsedNanos since the start
 * @param iops         over the last interval
 * @param mibPerSecond over the last interval
 */
public record LoadProgress(long elapsedNanos, LoadStats.Counters total, double iops, double mibPerSecond) {
}

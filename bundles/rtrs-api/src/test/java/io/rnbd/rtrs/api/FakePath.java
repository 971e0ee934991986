package io.rnbd.rtrs.api;

/**
 * A path whose live values the test sets directly: what every multipath policy's tests pick
 * among (published in rtrs-api's test-jar).
 */
public final class FakePath implements PathView {
    private final String name;
    public volatile int inflight;
    public volatile long hbRttNanos;
    public volatile long ioLatencyNanos;

    public FakePath(String name) {
        this.name = name;
    }

    public FakePath(String name, int inflight, long hbRttNanos, long ioLatencyNanos) {
        this(name);
        this.inflight = inflight;
        this.hbRttNanos = hbRttNanos;
        this.ioLatencyNanos = ioLatencyNanos;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int inflight() {
        return inflight;
    }

    @Override
    public long heartbeatRttNanos() {
        return hbRttNanos;
    }

    @Override
    public long ioLatencyNanos() {
        return ioLatencyNanos;
    }

    @Override
    public String toString() {
        return name;
    }
}

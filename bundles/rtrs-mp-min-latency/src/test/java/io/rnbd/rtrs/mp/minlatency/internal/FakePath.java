package io.rnbd.rtrs.mp.minlatency.internal;

import io.rnbd.rtrs.api.PathView;

/** A path whose live values the test sets directly. */
final class FakePath implements PathView {
    private final String name;
    volatile int inflight;
    volatile long hbRttNanos;
    volatile long ioLatencyNanos;

    FakePath(String name) {
        this.name = name;
    }

    FakePath(String name, int inflight, long hbRttNanos, long ioLatencyNanos) {
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

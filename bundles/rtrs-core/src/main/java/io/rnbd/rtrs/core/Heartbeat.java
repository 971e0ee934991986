package io.rnbd.rtrs.core;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rtrs.proto.Imm;

import java.util.concurrent.ScheduledFuture;

/**
 * A connected path's heartbeat, the client's and the server's (Linux's rtrs_start_hb,
 * hb_work and rtrs_stop_hb in rtrs.c): an empty RDMA_WRITE_WITH_IMM on connection 0 every
 * {@code hb.interval.ms}; anything received counts as a sign of life; {@code hb.missed.max}
 * beats without one fail the path. The other side's heartbeat is acknowledged, and an
 * acknowledgement of ours gives the round trip (the min-latency policy's measure). Guarded
 * by the session lock.
 */
public final class Heartbeat {

    /** The path as its heartbeat sees it; called under the session lock. */
    public interface Path {
        /** Whether the path is connected: a beat of a path that is not is skipped. */
        boolean connected();

        /** An empty RDMA_WRITE_WITH_IMM with {@code imm} on connection 0 (rtrs_post_rdma_write_imm_empty). */
        void writeImmEmpty(int imm) throws RdmaException;

        /** The path failed. */
        void fail(int errno, String why);
    }

    /** The session's clock and timer. */
    public interface Clock {
        /** Run {@code underLock} under the session lock every {@code periodMs}, on the session's timer. */
        ScheduledFuture<?> every(long periodMs, Runnable underLock);

        long nanoTime();
    }

    private final Path path;
    private final Clock clock;
    private final long intervalMs;
    private final int missedMax;
    private int missed;
    private long sentNanos;
    private volatile long rttNanos;
    private ScheduledFuture<?> task;

    public Heartbeat(Path path, Clock clock, long intervalMs, int missedMax) {
        this.path = path;
        this.clock = clock;
        this.intervalMs = intervalMs;
        this.missedMax = missedMax;
    }

    /** The path is up: beat every {@code hb.interval.ms}. */
    public void start() {
        missed = 0;
        task = clock.every(intervalMs, this::beat);
    }

    public void stop() {
        if (task != null) {
            task.cancel(false);
            task = null;
        }
    }

    /** Something arrived on the path. */
    public void heard() {
        missed = 0;
    }

    /** The other side's heartbeat: acknowledge it. */
    public void ack() throws RdmaException {
        path.writeImmEmpty(Imm.hbAck());
    }

    /** The other side acknowledged ours. */
    public void acked() {
        rttNanos = clock.nanoTime() - sentNanos;
    }

    /** The last heartbeat's round trip (0 before the first acknowledgement); any thread. */
    public long rttNanos() {
        return rttNanos;
    }

    private void beat() {
        if (!path.connected()) {
            return;
        }
        if (missed >= missedMax) {
            path.fail(Errno.ETIMEDOUT, "missed " + missed + " heartbeats");
            return;
        }
        missed++;
        sentNanos = clock.nanoTime();
        try {
            path.writeImmEmpty(Imm.hbMsg());
        } catch (RdmaException e) {
            path.fail(e.errno(), "heartbeat send failed");
        }
    }
}

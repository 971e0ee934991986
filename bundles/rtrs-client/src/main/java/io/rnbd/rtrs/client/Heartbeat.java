package io.rnbd.rtrs.client;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.proto.Imm;

import java.util.concurrent.ScheduledFuture;

/**
 * A connected path's heartbeat (Linux's rtrs_start_hb/hb_work): an empty RDMA_WRITE_WITH_IMM
 * on connection 0 every {@code hb.interval.ms}, anything received counts as a sign of life,
 * and {@code hb.missed.max} beats without one fail the path. Measures the heartbeat's round
 * trip for the min-latency policy. Guarded by the session lock.
 */
final class Heartbeat {
    private final ClientPath path;
    private int missed;
    private long sentNanos;
    private ScheduledFuture<?> task;

    Heartbeat(ClientPath path) {
        this.path = path;
    }

    /** The path is up: beat every {@code hb.interval.ms}. */
    void start() {
        missed = 0;
        task = path.session.every(path.session.cfg().hbIntervalMs(), this::beat);
    }

    void stop() {
        if (task != null) {
            task.cancel(false);
            task = null;
        }
    }

    /** Something arrived on the path. */
    void heard() {
        missed = 0;
    }

    /** The server's heartbeat: acknowledge it. */
    void ack() throws RdmaException {
        path.cons[0].writeImmEmpty(Imm.hbAck());
    }

    /** The server acknowledged ours. */
    void acked() {
        path.hbRtt = path.session.nanoTime() - sentNanos;
    }

    private void beat() {
        if (path.sm.state() != PathState.CONNECTED) {
            return;
        }
        if (missed >= path.session.cfg().hbMissedMax()) {
            path.fail(Errno.ETIMEDOUT, "missed " + missed + " heartbeats");
            return;
        }
        missed++;
        sentNanos = path.session.nanoTime();
        try {
            path.cons[0].writeImmEmpty(Imm.hbMsg());
        } catch (RdmaException e) {
            path.fail(e.errno(), "heartbeat send failed");
        }
    }
}

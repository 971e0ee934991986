package io.rnbd.rtrs.server;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rtrs.proto.Imm;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The heartbeats of one connected path (rtrs_start_hb / rtrs_stop_hb): an empty
 * RDMA_WRITE_WITH_IMM on connection 0 every {@code hb.interval.ms}, and the path closed once
 * {@code hb.missed.max} went by without anything received. Under the session's lock but for
 * the timer's tick.
 */
final class ServerHeartbeat {
    private final ServerPath path;
    private final ServerConfig cfg;
    private int missed;
    private ScheduledFuture<?> task;

    ServerHeartbeat(ServerPath path, ServerConfig cfg) {
        this.path = path;
        this.cfg = cfg;
    }

    /** Anything the client sends proves it alive. */
    void heard() {
        missed = 0;
    }

    /** The client's heartbeat: acknowledged on connection 0. */
    void ack() throws RdmaException {
        path.service().writeImmEmpty(Imm.hbAck());
    }

    /** From INFO_RSP on. */
    void start() {
        long period = cfg.hbIntervalMs();
        task = path.session.server.timer().scheduleAtFixedRate(this::tick, period, period, TimeUnit.MILLISECONDS);
    }

    void stop() {
        if (task != null) {
            task.cancel(false);
        }
    }

    private void tick() {
        synchronized (path.session) {
            tickLocked();
        }
        path.session.runClosers();
    }

    private void tickLocked() {
        if (!path.connected()) {
            return;
        }
        if (missed >= cfg.hbMissedMax()) {
            path.failLocked(Errno.ETIMEDOUT, "missed " + missed + " heartbeats");
            return;
        }
        missed++;
        try {
            path.service().writeImmEmpty(Imm.hbMsg());
        } catch (RdmaException e) {
            path.failLocked(e.errno(), "heartbeat send failed");
        }
    }
}

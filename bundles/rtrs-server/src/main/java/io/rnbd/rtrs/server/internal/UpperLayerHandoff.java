package io.rnbd.rtrs.server.internal;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.api.RtrsServerRequest;
import io.rnbd.rtrs.api.RtrsServerSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The handoff to the upper layer ({@link RtrsServerOps}, which may come, go and be replaced
 * while clients stay connected): requests, parked while there is none, and the session
 * events, each told once. Knows the rest of the server only through rtrs-api's views of a
 * request and a session.
 */
final class UpperLayerHandoff implements UpperLayer {
    private static final Logger LOG = LoggerFactory.getLogger(UpperLayerHandoff.class);

    private final Supplier<RtrsServerOps> ops;
    private final ScheduledExecutorService timer;
    private final long waitMs;
    /** Requests that arrived while there was no upper layer; guarded by itself. */
    private final List<RtrsServerRequest> parked = new ArrayList<>();
    /** Sessions whose connection the upper layer was told of (or would have been, had it been there). */
    private final Set<RtrsServerSession> told = ConcurrentHashMap.newKeySet();
    /**
     * Closes handed to the timer and not yet told: {@link #close()} tells them itself, since
     * the bundle's timer is shut down right after it and would drop them (CI's SwapIT: an idle
     * session's paths left as the devices went, its close was queued and dropped, and the
     * RNBD server kept its opens; every device's re-OPEN was refused EBUSY forever).
     */
    private final Set<RtrsServerSession> closesUntold = ConcurrentHashMap.newKeySet();

    /**
     * @param ops    the upper layer now (may change between calls; null = none)
     * @param waitMs how long a request waits while there is none ({@code upper.wait.ms}); then ENODEV
     */
    UpperLayerHandoff(Supplier<RtrsServerOps> ops, ScheduledExecutorService timer, long waitMs) {
        this.ops = ops;
        this.timer = timer;
        this.waitMs = waitMs;
    }

    /**
     * While there is no upper layer (its bundle restarts) the request waits up to
     * {@code upper.wait.ms} instead of failing: the client sees a stall, and the new upper
     * layer, which knows none of the old one's device ids, answers ENXIO, which makes the RNBD
     * client open again and resend.
     */
    @Override
    public void dispatch(RtrsServerRequest r) {
        RtrsServerOps o = ops.get();
        if (o == null) {
            park(r);
            return;
        }
        deliver(o, r);
    }

    private void park(RtrsServerRequest r) {
        if (waitMs == 0) {
            r.complete(Errno.ENODEV);
            return;
        }
        boolean stopped = false;
        // parked and its deadline armed in one step: whoever sees it waiting (a test moving
        // fake time, waitingForUpperLayer) sees a deadline that will fire; the expiry itself
        // takes this lock, so it cannot run before the request is in the list
        synchronized (parked) {
            parked.add(r);
            try {
                timer.schedule(() -> {
                    boolean expired;
                    synchronized (parked) {
                        expired = parked.remove(r);
                    }
                    if (expired) {
                        r.complete(Errno.ENODEV);
                    }
                }, waitMs, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                parked.remove(r);
                stopped = true;
            }
        }
        if (stopped) {
            r.complete(Errno.ENODEV);
            return;
        }
        // the upper layer may have come while we parked
        upperLayerChanged();
    }

    /** Requests waiting for an upper layer now. */
    int waiting() {
        synchronized (parked) {
            return parked.size();
        }
    }

    /** The upper layer came, went or was replaced: what waited for one goes to it now. */
    void upperLayerChanged() {
        RtrsServerOps o = ops.get();
        if (o == null) {
            return;
        }
        List<RtrsServerRequest> go;
        synchronized (parked) {
            go = new ArrayList<>(parked);
            parked.clear();
        }
        if (!go.isEmpty()) {
            LOG.info("rtrs-server: {} requests that waited for an upper layer go to it", go.size());
        }
        for (RtrsServerRequest r : go) {
            deliver(o, r);
        }
    }

    /** An upper layer that throws has the request answered EIO (a second answer is the request's to drop). */
    private static void deliver(RtrsServerOps o, RtrsServerRequest r) {
        try {
            o.onRequest(r);
        } catch (RuntimeException e) {
            LOG.warn("upper layer failed a request", e);
            r.complete(Errno.EIO);
        }
    }

    @Override
    public void sessionConnected(RtrsServerSession s) {
        if (!told.add(s)) {
            return;
        }
        RtrsServerOps o = ops.get();
        if (o != null) {
            timer.execute(() -> o.onSessionConnected(s));
        }
    }

    /**
     * Tell the upper layer, once, that {@code s} is gone, so that it releases what it holds for
     * it (RNBD: the session's opens, among them the export's one writer). A close it never
     * hears of holds those forever: the client's next session is refused the export (EBUSY).
     * Inline too when the timer has stopped.
     */
    @Override
    public void sessionClosed(RtrsServerSession s, boolean async) {
        if (!told.remove(s)) {
            return;
        }
        closesUntold.add(s);
        if (async) {
            try {
                timer.execute(() -> tellClosed(s));
                return;
            } catch (RejectedExecutionException stopped) {
                // the server is stopping: tell it here
            }
        }
        tellClosed(s);
    }

    /** Once per session, whoever comes first: the timer's task or {@link #close()}. */
    private void tellClosed(RtrsServerSession s) {
        if (!closesUntold.remove(s)) {
            return;
        }
        RtrsServerOps o = ops.get();
        if (o == null) {
            return;
        }
        try {
            o.onSessionClosed(s);
        } catch (RuntimeException e) {
            LOG.warn("upper layer failed on the close of {}", s, e);
        }
    }

    /** Every request still waiting for an upper layer is answered ENODEV. */
    void failParked() {
        List<RtrsServerRequest> waiting;
        synchronized (parked) {
            waiting = new ArrayList<>(parked);
            parked.clear();
        }
        for (RtrsServerRequest r : waiting) {
            r.complete(Errno.ENODEV);
        }
    }

    /** The closes still queued on the timer are told now, before the timer stops with the bundle. */
    void close() {
        for (RtrsServerSession s : List.copyOf(closesUntold)) {
            tellClosed(s);
        }
    }
}

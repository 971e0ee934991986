package io.rnbd.rtrs.client;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The session lock (the {@link ClientSession}'s monitor) and what a section under it leaves
 * for after its release: queue-pair teardown, IO posts ({@link Doorbells}) and user
 * callbacks, run outside the lock by the thread that released it.
 */
final class SessionLock {
    /** The session's logger: these lines were always the session's. */
    private static final Logger LOG = LoggerFactory.getLogger(ClientSession.class);

    private final ClientSession session;
    private final Doorbells doorbells;
    private final ScheduledExecutorService timer;
    private final Deque<Runnable> deferred = new ArrayDeque<>();
    private final Deque<Runnable> closers = new ArrayDeque<>();
    /** Nesting of {@link #lockedThen} on the thread that holds the lock. Guarded by the lock. */
    private int depth;

    SessionLock(ClientSession session, Doorbells doorbells, ScheduledExecutorService timer) {
        this.session = session;
        this.doorbells = doorbells;
        this.timer = timer;
    }

    /** Under the lock: a user callback, run once the lock is released. */
    void defer(Runnable callback) {
        deferred.add(callback);
    }

    /** Under the lock: teardown that waits for a provider thread, run once the lock is released. */
    void closeAfterUnlock(Runnable closer) {
        closers.add(closer);
    }

    /**
     * Run {@code r} under the session lock, then the user callbacks it produced. Queue-pair
     * teardown it produced goes to the timer thread: closing waits for the provider's
     * thread, and the thread we are on may be another device's provider thread doing the
     * same towards us.
     */
    void locked(Runnable r) {
        lockedThen(r, false);
    }

    /** As {@link #locked}, but tear down on this thread before returning (device removal, close). */
    void lockedAndRelease(Runnable r) {
        lockedThen(r, true);
    }

    private void lockedThen(Runnable r, boolean releaseHere) {
        AfterUnlock after;
        synchronized (session) {
            depth++;
            try {
                r.run();
                session.updateState();
            } finally {
                depth--;
            }
            if (depth > 0) {
                return; // the outermost call runs what this one queued
            }
            after = AfterUnlock.take(this);
        }
        // One monitor section per batch, not per item: the submitting thread and the
        // completing thread both come through here once per IO.
        while (after != null) {
            after.run(this, releaseHere);
            synchronized (session) {
                after = AfterUnlock.take(this);
            }
        }
    }

    /** What the lock queued for after its release, taken in one go: teardown, IO posts, callbacks. */
    private record AfterUnlock(Runnable[] closers, PathIo.Post[] doorbells, Runnable[] callbacks) {
        private static final Runnable[] NONE = {};

        /** Under the lock; null when nothing is queued. */
        static AfterUnlock take(SessionLock l) {
            if (l.closers.isEmpty() && l.doorbells.isEmpty() && l.deferred.isEmpty()) {
                return null;
            }
            return new AfterUnlock(drain(l.closers), l.doorbells.take(), drain(l.deferred));
        }

        private static Runnable[] drain(Deque<Runnable> q) {
            if (q.isEmpty()) {
                return NONE;
            }
            Runnable[] a = q.toArray(NONE);
            q.clear();
            return a;
        }

        /** Every item runs, whatever another threw: they are out of the session's queues now. */
        void run(SessionLock l, boolean releaseHere) {
            for (Runnable c : closers) {
                safely(l, "teardown", () -> {
                    if (releaseHere) {
                        c.run();
                    } else {
                        try {
                            l.timer.execute(c);
                        } catch (RejectedExecutionException stopped) {
                            c.run();
                        }
                    }
                });
            }
            if (doorbells.length > 0 && !l.doorbells.hold(doorbells)) {
                safely(l, "post", () -> l.doorbells.ring(doorbells));
            }
            for (Runnable d : callbacks) {
                safely(l, "callback", d);
            }
        }

        private static void safely(SessionLock l, String what, Runnable r) {
            try {
                r.run();
            } catch (RuntimeException e) {
                LOG.warn("session {}: {} failed", l.session.name(), what, e);
            }
        }
    }
}

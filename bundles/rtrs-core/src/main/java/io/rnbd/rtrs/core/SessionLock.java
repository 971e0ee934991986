package io.rnbd.rtrs.core;

import org.slf4j.Logger;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A session's lock and what a section under it leaves for after its release, for the client
 * and the server alike: queue-pair teardown, the owner's own work (the client's IO posts)
 * and callbacks, run outside the lock by the thread that released it.
 *
 * <p>The lock is the owner's monitor ({@link #monitor()}), so {@code synchronized} methods of
 * the owner take it too. Two ways in:
 * <ul>
 *   <li>{@link #locked(Runnable)}: the section as a runnable; nested calls leave the work to
 *       the outermost one;</li>
 *   <li>{@code synchronized (lock.monitor()) { ... }} then {@link #afterUnlock()}, for a
 *       section that returns what it found (the server's receive and answer, where a
 *       capturing lambda per IO would cost an allocation); {@code afterUnlock} does nothing
 *       while the thread still holds the monitor, so the outermost section runs it.</li>
 * </ul>
 *
 * <p>Teardown goes to the timer thread (unless {@link #lockedAndRelease}): closing a queue
 * pair waits for its provider's thread, and the releasing thread may be another device's
 * provider thread doing the same towards this one (a session's paths span devices): two of
 * them closing each other's queue pairs inline would wait for each other forever.
 *
 * @param <P> the owner's own kind of work queued under the lock (the client's doorbells)
 */
public final class SessionLock<P> {

    /** What the owner adds to the lock. */
    public interface Stage<P> {
        /** Under the lock, at the end of every section (the client recomputes its state here). */
        void beforeUnlock();

        /** Under the lock: the owner's work queued for after it, or null for none. */
        P take();

        /** After the lock, between the teardown and the callbacks. */
        void run(P work);
    }

    /** An owner with no work of its own. */
    public static final Stage<Void> NO_STAGE = new Stage<>() {
        @Override
        public void beforeUnlock() {
        }

        @Override
        public Void take() {
            return null;
        }

        @Override
        public void run(Void work) {
        }
    };

    private static final Runnable[] NONE = {};

    private final Object monitor;
    private final Logger log;
    private final ScheduledExecutorService timer;
    private final Stage<P> stage;
    private final Deque<Runnable> deferred = new ArrayDeque<>();
    private final Deque<Runnable> closers = new ArrayDeque<>();
    /** Nesting of {@link #locked} on the thread that holds the lock. Guarded by the lock. */
    private int depth;

    /**
     * @param monitor the owner (the session): its monitor is the lock, its {@code toString} names it in the log
     * @param log     the owner's logger: these lines are the session's
     * @param timer   where teardown and the timed sections ({@link #later}, {@link #every}) run
     */
    public SessionLock(Object monitor, Logger log, ScheduledExecutorService timer, Stage<P> stage) {
        this.monitor = monitor;
        this.log = log;
        this.timer = timer;
        this.stage = stage;
    }

    /** The object whose monitor is the lock. */
    public Object monitor() {
        return monitor;
    }

    /** Under the lock: a callback, run once the lock is released. */
    public void defer(Runnable callback) {
        deferred.add(callback);
    }

    /** Under the lock: teardown that waits for a provider thread, run once the lock is released. */
    public void closeAfterUnlock(Runnable closer) {
        closers.add(closer);
    }

    /** Any thread: run {@code r} under the lock, then what it left for after the lock (teardown on the timer). */
    public void locked(Runnable r) {
        lockedThen(r, false);
    }

    /** Any thread: run {@code r} as {@link #locked} in {@code delayMs}, on the timer (a deadline, a reconnect). */
    public ScheduledFuture<?> later(long delayMs, Runnable r) {
        return timer.schedule(() -> locked(r), delayMs, TimeUnit.MILLISECONDS);
    }

    /** Any thread: run {@code r} as {@link #locked} every {@code periodMs}, on the timer (heartbeats, sweeps). */
    public ScheduledFuture<?> every(long periodMs, Runnable r) {
        return timer.scheduleAtFixedRate(() -> locked(r), periodMs, periodMs, TimeUnit.MILLISECONDS);
    }

    /** As {@link #locked}, but tear down on this thread before returning (device removal, close). */
    public void lockedAndRelease(Runnable r) {
        lockedThen(r, true);
    }

    /**
     * After a section entered with {@code synchronized (monitor())}: run what it left for after
     * the lock. Nothing while this thread still holds the lock: the outermost section runs it.
     */
    public void afterUnlock() {
        if (Thread.holdsLock(monitor)) {
            return;
        }
        After after;
        synchronized (monitor) {
            after = take();
        }
        drain(after, false);
    }

    private void lockedThen(Runnable r, boolean releaseHere) {
        After after;
        synchronized (monitor) {
            depth++;
            try {
                r.run();
                stage.beforeUnlock();
            } finally {
                depth--;
            }
            if (depth > 0) {
                return; // the outermost call runs what this one queued
            }
            after = take();
        }
        drain(after, releaseHere);
    }

    /** One monitor section per batch, not per item: the submitting and the completing thread both come through here once per IO. */
    private void drain(After after, boolean releaseHere) {
        while (after != null) {
            after.run(releaseHere);
            synchronized (monitor) {
                after = take();
            }
        }
    }

    /** Under the lock; null when nothing is queued. */
    private After take() {
        P work = stage.take();
        if (closers.isEmpty() && work == null && deferred.isEmpty()) {
            return null;
        }
        return new After(drain(closers), work, drain(deferred));
    }

    private static Runnable[] drain(Deque<Runnable> q) {
        if (q.isEmpty()) {
            return NONE;
        }
        Runnable[] a = q.toArray(NONE);
        q.clear();
        return a;
    }

    /** What the lock queued for after its release, taken in one go: teardown, the owner's work, callbacks. */
    private final class After {
        private final Runnable[] closers;
        private final P work;
        private final Runnable[] callbacks;

        After(Runnable[] closers, P work, Runnable[] callbacks) {
            this.closers = closers;
            this.work = work;
            this.callbacks = callbacks;
        }

        /** Every item runs, whatever another threw: they are out of the queues now. */
        void run(boolean releaseHere) {
            for (Runnable c : closers) {
                try {
                    if (releaseHere) {
                        c.run();
                    } else {
                        try {
                            timer.execute(c);
                        } catch (RejectedExecutionException stopped) {
                            c.run();
                        }
                    }
                } catch (RuntimeException e) {
                    log.warn("{}: teardown failed", monitor, e);
                }
            }
            if (work != null) {
                try {
                    stage.run(work);
                } catch (RuntimeException e) {
                    log.warn("{}: post failed", monitor, e);
                }
            }
            for (Runnable d : callbacks) {
                try {
                    d.run();
                } catch (RuntimeException e) {
                    log.warn("{}: callback failed", monitor, e);
                }
            }
        }
    }
}

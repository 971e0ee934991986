package io.rnbd.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

/**
 * A {@link ScheduledExecutorService} on fake time: nothing runs until the test calls
 * {@link #advance(Duration)} or {@link #runDue()}, and then tasks run on the calling
 * thread in due-time order (ties in submission order). {@link #clock()} and
 * {@link #nanoTime()} read the same fake time, so code under test that takes a
 * {@code Clock} or a {@code LongSupplier} nano source sees time move only with the test.
 *
 * <p>Thread-safe for submission from other threads; tasks run only on the thread that
 * advances time.
 */
public final class FakeScheduler implements ScheduledExecutorService {
    private final Object lock = new Object();
    private final PriorityQueue<Task<?>> queue = new PriorityQueue<>();
    private long nowNanos;
    private long seq;
    private boolean shutdown;

    /** Current fake time in nanoseconds since the start. */
    public long nanoTime() {
        synchronized (lock) {
            return nowNanos;
        }
    }

    /** A nano source for code that takes one. */
    public LongSupplier nanoSource() {
        return this::nanoTime;
    }

    /** A clock reading fake time (epoch 0 + elapsed). */
    public Clock clock() {
        return new Clock() {
            @Override
            public ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return Instant.ofEpochSecond(0, nanoTime());
            }
        };
    }

    /** Move time forward by {@code d}, running every task that falls due on the way. */
    public void advance(Duration d) {
        long target;
        synchronized (lock) {
            target = nowNanos + d.toNanos();
        }
        while (true) {
            Task<?> next;
            synchronized (lock) {
                next = queue.peek();
                if (next == null || next.due > target) {
                    nowNanos = target;
                    return;
                }
                queue.poll();
                nowNanos = Math.max(nowNanos, next.due);
            }
            next.runOnce();
        }
    }

    public void advanceMillis(long ms) {
        advance(Duration.ofMillis(ms));
    }

    /** Run what is due now (tasks submitted with no delay), without moving time. */
    public void runDue() {
        advance(Duration.ZERO);
    }

    /** Number of tasks waiting (cancelled ones excluded). */
    public int pending() {
        return pendingDelays().size();
    }

    /**
     * How far ahead of now each waiting task is due (cancelled ones excluded), soonest first.
     * A test that waits for other threads to schedule something waits for these delays, not
     * for a count: a count cannot tell the timer it waits for from one about to be cancelled.
     */
    public List<Duration> pendingDelays() {
        synchronized (lock) {
            List<Duration> d = new ArrayList<>();
            for (Task<?> t : queue) {
                if (!t.isCancelled()) {
                    d.add(Duration.ofNanos(t.due - nowNanos));
                }
            }
            d.sort(null);
            return d;
        }
    }

    private <V> Task<V> enqueue(Callable<V> c, long delayNanos, long periodNanos) {
        synchronized (lock) {
            if (shutdown) {
                throw new RejectedExecutionException("fake scheduler shut down");
            }
            Task<V> t = new Task<>(c, nowNanos + Math.max(0, delayNanos), periodNanos, seq++);
            queue.add(t);
            return t;
        }
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        return enqueue(() -> {
            command.run();
            return null;
        }, unit.toNanos(delay), 0);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        return enqueue(callable, unit.toNanos(delay), 0);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        return enqueue(() -> {
            command.run();
            return null;
        }, unit.toNanos(initialDelay), unit.toNanos(period));
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        return scheduleAtFixedRate(command, initialDelay, delay, unit);
    }

    @Override
    public void execute(Runnable command) {
        schedule(command, 0, TimeUnit.NANOSECONDS);
    }

    @Override
    public Future<?> submit(Runnable task) {
        return schedule(task, 0, TimeUnit.NANOSECONDS);
    }

    @Override
    public <T> Future<T> submit(Runnable task, T result) {
        return enqueue(() -> {
            task.run();
            return result;
        }, 0, 0);
    }

    @Override
    public <T> Future<T> submit(Callable<T> task) {
        return enqueue(task, 0, 0);
    }

    @Override
    public void shutdown() {
        synchronized (lock) {
            shutdown = true;
        }
    }

    @Override
    public List<Runnable> shutdownNow() {
        synchronized (lock) {
            shutdown = true;
            List<Runnable> left = new ArrayList<>(queue);
            queue.clear();
            return left;
        }
    }

    @Override
    public boolean isShutdown() {
        synchronized (lock) {
            return shutdown;
        }
    }

    @Override
    public boolean isTerminated() {
        return isShutdown();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return isShutdown();
    }

    @Override
    public <T> List<Future<T>> invokeAll(Collection<? extends Callable<T>> tasks) {
        throw new UnsupportedOperationException("not on fake time");
    }

    @Override
    public <T> List<Future<T>> invokeAll(Collection<? extends Callable<T>> tasks, long timeout, TimeUnit unit) {
        throw new UnsupportedOperationException("not on fake time");
    }

    @Override
    public <T> T invokeAny(Collection<? extends Callable<T>> tasks) {
        throw new UnsupportedOperationException("not on fake time");
    }

    @Override
    public <T> T invokeAny(Collection<? extends Callable<T>> tasks, long timeout, TimeUnit unit) {
        throw new UnsupportedOperationException("not on fake time");
    }

    private final class Task<V> implements ScheduledFuture<V>, Runnable {
        private final Callable<V> body;
        private final long period;
        private final long order;
        private long due;
        private volatile boolean cancelled;
        private volatile boolean done;
        private V result;
        private Throwable failure;

        Task(Callable<V> body, long due, long period, long order) {
            this.body = body;
            this.due = due;
            this.period = period;
            this.order = order;
        }

        @Override
        public void run() {
            runOnce();
        }

        void runOnce() {
            if (cancelled) {
                return;
            }
            try {
                V v = body.call();
                if (period == 0) {
                    result = v;
                    done = true;
                }
            } catch (Throwable t) {
                failure = t;
                done = true;
                return;
            }
            if (period > 0 && !cancelled) {
                synchronized (lock) {
                    due += period;
                    queue.add(this);
                }
            }
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(due - nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            Task<?> t = (Task<?>) o;
            int c = Long.compare(due, t.due);
            return c != 0 ? c : Long.compare(order, t.order);
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            if (done) {
                return false;
            }
            cancelled = true;
            synchronized (lock) {
                queue.remove(this);
            }
            return true;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return done || cancelled;
        }

        @Override
        public V get() throws ExecutionException {
            if (cancelled) {
                throw new CancellationException();
            }
            if (!done) {
                throw new IllegalStateException("not run yet: advance the fake scheduler first");
            }
            if (failure != null) {
                throw new ExecutionException(failure);
            }
            return result;
        }

        @Override
        public V get(long timeout, TimeUnit unit) throws ExecutionException, TimeoutException {
            if (!isDone()) {
                throw new TimeoutException("not run yet on fake time");
            }
            return get();
        }
    }
}

package io.rnbd.testkit;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waits for a condition that other threads make true: a path connecting over real sockets, a
 * request reaching a backend, a kernel device appearing. Fails the test naming what it waited
 * for when the condition does not hold in time; returns as soon as it holds (no fixed sleeps).
 *
 * <p>Where the code under test takes a clock and a scheduler, a test advances a
 * {@link FakeScheduler} instead and needs no waiting at all; this is for the rest.
 *
 * <pre>
 *   Await.until("path reconnected", () -&gt; path.state() == CONNECTED);
 *   Await.until("device gone", () -&gt; !Files.exists(sys), Duration.ofSeconds(5));
 * </pre>
 */
public final class Await {
    /**
     * How long {@link #until(String, BooleanSupplier)} waits: far beyond what any of these
     * conditions takes on a quiet machine, so a loaded CI machine does not fail a good test.
     */
    public static final Duration TIMEOUT = Duration.ofSeconds(20);

    /** Between two checks of the condition: at least this ... */
    private static final long MIN_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** ... and at most this. */
    private static final long MAX_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private Await() {
    }

    /** Waits up to {@link #TIMEOUT} until {@code condition} holds, else fails naming {@code what}. */
    public static void until(String what, BooleanSupplier condition) {
        until(what, condition, TIMEOUT);
    }

    /** Waits up to {@code timeout} until {@code condition} holds, else fails naming {@code what}. */
    public static void until(String what, BooleanSupplier condition, Duration timeout) {
        until(() -> what, condition, timeout);
    }

    /**
     * Waits up to {@code timeout} until {@code condition} holds, else fails with the message
     * {@code what} makes at that moment (to show the state the condition never reached).
     */
    public static void until(Supplier<String> what, BooleanSupplier condition, Duration timeout) {
        long start = System.nanoTime();
        while (!condition.getAsBoolean()) {
            long waited = System.nanoTime() - start;
            if (waited > timeout.toNanos()) {
                throw new AssertionError(what.get() + ": not within " + timeout);
            }
            // Polling: the conditions are states of other threads, sockets or the kernel (sysfs)
            // that offer nothing to block on. A short sleep keeps the waiter off a core the code
            // under test needs (two on CI, emulated ones in the rxe guest); it grows with the
            // time already waited, so that a long wait costs no more than a tenth of itself in
            // reaction and a short one returns within a millisecond of the condition holding.
            try {
                TimeUnit.NANOSECONDS.sleep(Math.min(MAX_PAUSE_NANOS, Math.max(MIN_PAUSE_NANOS, waited / 10)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what.get(), e);
            }
        }
    }
}

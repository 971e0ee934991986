package io.rnbd.common;

import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Waiting until what an admin operation set in motion shows: an admin service writes a
 * configuration, and the component it creates comes up (or goes) on another thread later, so
 * the service looks at its view of the running thing every {@code pollMs} until the view
 * says done or a deadline passes. Written once for the admin services that do this (the RNBD
 * client's map, the RNBD server's export add and remove, the soft provider's link add and
 * delete); a test gives a fake clock whose sleep moves it, so no test waits.
 */
public final class Settle {
    /** Sleeps; a test's moves its fake clock instead. */
    @FunctionalInterface
    public interface Sleeper {
        void sleep(long ms) throws InterruptedException;
    }

    private final LongSupplier nanoClock;
    private final Sleeper sleeper;
    private final long pollMs;

    public Settle(LongSupplier nanoClock, Sleeper sleeper, long pollMs) {
        if (pollMs <= 0) {
            throw new IllegalArgumentException("pollMs must be positive: " + pollMs);
        }
        this.nanoClock = nanoClock;
        this.sleeper = sleeper;
        this.pollMs = pollMs;
    }

    /** On the system's clock, sleeping for real. */
    public static Settle system(long pollMs) {
        return new Settle(System::nanoTime, Thread::sleep, pollMs);
    }

    /**
     * What {@code view} shows once {@code done} accepts it, or what it shows when {@code ms}
     * have passed (the caller tells the two apart with {@code done} again). The view is looked
     * at once more after the deadline, so a wait of 0 ms still looks once.
     *
     * @throws InterruptedException if the thread is interrupted while sleeping; its interrupt
     *         flag is set again, so the caller need only turn this into its own error
     */
    public <T> T until(Supplier<T> view, Predicate<? super T> done, long ms) throws InterruptedException {
        long deadline = nanoClock.getAsLong() + ms * 1_000_000;
        while (true) {
            T seen = view.get();
            if (done.test(seen) || nanoClock.getAsLong() - deadline >= 0) {
                return seen;
            }
            try {
                sleeper.sleep(pollMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw e;
            }
        }
    }
}

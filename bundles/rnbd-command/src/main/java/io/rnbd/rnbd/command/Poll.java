package io.rnbd.rnbd.command;

import java.util.Optional;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Configuration changes reach rnbd-server and rnbd-client asynchronously (ConfigAdmin → SCR),
 * so a command that wants to report the outcome looks again for a short while.
 */
final class Poll {
    private static final long STEP_MILLIS = 50;

    private Poll() {
    }

    /** The last value seen: the first one {@code settled} accepts, or whatever there is at the deadline. */
    static <T> Optional<T> until(Supplier<Optional<T>> probe, Predicate<T> settled, long waitMillis) {
        long deadline = System.nanoTime() + waitMillis * 1_000_000;
        while (true) {
            Optional<T> v = probe.get();
            if (v.isPresent() && settled.test(v.get()) || System.nanoTime() - deadline >= 0) {
                return v;
            }
            try {
                Thread.sleep(STEP_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return v;
            }
        }
    }
}

package io.rnbd.bench;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Counts completions delivered on a provider thread and lets one benchmark thread wait for a
 * count. The waiter parks at once (no spinning): on two cores a spinning waiter steals the CPU
 * the provider's IO thread needs, which would flatter nothing and distort everything.
 */
final class Completions {
    private final AtomicLong done = new AtomicLong();
    private volatile Thread waiter;
    private volatile String failure;

    void complete() {
        done.incrementAndGet();
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    void fail(String why) {
        failure = why;
        complete();
    }

    long count() {
        return done.get();
    }

    /** Waits until {@code target} completions have arrived in total. */
    void await(long target) throws TimeoutException {
        if (done.get() >= target) {
            return;
        }
        waiter = Thread.currentThread();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        try {
            while (done.get() < target) {
                if (failure != null) {
                    throw new IllegalStateException(failure);
                }
                LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(100));
                if (System.nanoTime() > deadline) {
                    throw new TimeoutException("only " + done.get() + " of " + target + " completions");
                }
            }
        } finally {
            waiter = null;
        }
        if (failure != null) {
            throw new IllegalStateException(failure);
        }
    }
}

package io.rnbd.rtrs.client;

import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.fail;

final class Await {
    private Await() {
    }

    /** Poll a condition of a real-IO test (no fixed sleeps: returns as soon as it holds). */
    static void until(String what, BooleanSupplier cond) throws InterruptedException {
        long end = System.nanoTime() + 20_000_000_000L;
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) {
                fail("timed out waiting for " + what);
            }
            Thread.onSpinWait();
            Thread.sleep(1);
        }
    }
}

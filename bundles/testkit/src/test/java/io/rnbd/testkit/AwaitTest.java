package io.rnbd.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AwaitTest {
    @Test
    void returnsOnceTheConditionHolds() {
        AtomicInteger checks = new AtomicInteger();
        Await.until("the third check", () -> checks.incrementAndGet() == 3, Duration.ofSeconds(5));
        assertEquals(3, checks.get());
    }

    @Test
    void failsNamingWhatItWaitedForAndTheStateItSaw() {
        AssertionError e = assertThrows(AssertionError.class,
                () -> Await.until("never", () -> false, Duration.ofMillis(30)));
        assertEquals("never: not within PT0.03S", e.getMessage());
        AtomicInteger seen = new AtomicInteger(7);
        e = assertThrows(AssertionError.class,
                () -> Await.until(() -> "state " + seen.get(), () -> false, Duration.ofMillis(30)));
        assertEquals("state 7: not within PT0.03S", e.getMessage());
    }

    @Test
    void anInterruptedWaitFailsAndKeepsTheInterrupt() {
        Thread.currentThread().interrupt();
        AssertionError e = assertThrows(AssertionError.class,
                () -> Await.until("never", () -> false, Duration.ofSeconds(5)));
        assertEquals("interrupted waiting for never", e.getMessage());
        assertTrue(Thread.interrupted());
    }
}

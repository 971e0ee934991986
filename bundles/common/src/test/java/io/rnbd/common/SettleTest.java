package io.rnbd.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SettleTest {
    private long now;
    private final List<Long> sleeps = new ArrayList<>();
    private final Settle settle = new Settle(() -> now, ms -> {
        sleeps.add(ms);
        now += ms * 1_000_000;
    }, 20);

    @Test
    void returnsTheFirstViewDoneAcceptsWithoutSleepingFurther() throws InterruptedException {
        int[] looks = {0};
        int seen = settle.until(() -> ++looks[0], v -> v == 3, 10_000);
        assertEquals(3, seen);
        assertEquals(List.of(20L, 20L), sleeps, "slept between the looks only");
    }

    @Test
    void atTheDeadlineReturnsWhatTheViewShowsThen() throws InterruptedException {
        int[] looks = {0};
        int seen = settle.until(() -> ++looks[0], v -> false, 100);
        // looks at 0, 20, ..., 100 ms: six looks, five sleeps, no sleep past the deadline
        assertEquals(6, seen);
        assertEquals(5, sleeps.size());
        assertEquals(100_000_000L, now);
    }

    @Test
    void aZeroWaitStillLooksOnce() throws InterruptedException {
        assertEquals("x", settle.until(() -> "x", v -> false, 0));
        assertTrue(sleeps.isEmpty());
    }

    @Test
    void anInterruptedSleepIsThrownWithTheFlagSetAgain() {
        Settle interrupted = new Settle(() -> now, ms -> {
            throw new InterruptedException();
        }, 20);
        try {
            assertThrows(InterruptedException.class, () -> interrupted.until(() -> 1, v -> false, 1_000));
            assertTrue(Thread.currentThread().isInterrupted());
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void aPollOfZeroIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new Settle(() -> now, ms -> { }, 0));
    }
}

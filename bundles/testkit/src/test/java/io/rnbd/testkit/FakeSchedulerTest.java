package io.rnbd.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class FakeSchedulerTest {
    @Test
    void runsTasksInDueOrderOnlyWhenTimeAdvances() {
        FakeScheduler s = new FakeScheduler();
        List<String> log = new ArrayList<>();
        s.schedule(() -> log.add("b@20"), 20, TimeUnit.MILLISECONDS);
        s.schedule(() -> log.add("a@10"), 10, TimeUnit.MILLISECONDS);
        s.execute(() -> log.add("now"));
        assertTrue(log.isEmpty());
        s.advanceMillis(15);
        assertEquals(List.of("now", "a@10"), log);
        assertEquals(Duration.ofMillis(15).toNanos(), s.nanoTime());
        s.advanceMillis(5);
        assertEquals(List.of("now", "a@10", "b@20"), log);
    }

    @Test
    void periodicTaskRepeatsUntilCancelledAndSeesTheTimeItWasDue() {
        FakeScheduler s = new FakeScheduler();
        List<Long> at = new ArrayList<>();
        ScheduledFuture<?> f = s.scheduleAtFixedRate(() -> at.add(s.nanoTime() / 1_000_000), 5, 5, TimeUnit.MILLISECONDS);
        s.advanceMillis(17);
        assertEquals(List.of(5L, 10L, 15L), at);
        f.cancel(false);
        s.advanceMillis(100);
        assertEquals(3, at.size());
        assertEquals(0, s.pending());
    }

    @Test
    void taskScheduledFromATaskRunsInTheSameAdvanceWhenDue() {
        FakeScheduler s = new FakeScheduler();
        List<String> log = new ArrayList<>();
        s.schedule(() -> s.schedule(() -> log.add("inner"), 3, TimeUnit.MILLISECONDS), 1, TimeUnit.MILLISECONDS);
        s.advanceMillis(4);
        assertEquals(List.of("inner"), log);
        assertEquals(4_000_000L, s.clock().instant().getNano());
    }
}

package io.rnbd.rnbd.server;

import io.rnbd.testkit.FakeScheduler;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The open grace's one race: an OPEN looks for its export and finds nothing, the export is
 * added (waking nobody: nothing is parked yet), and only then does the OPEN park. Seen in
 * SwapIT as a 10 s stall of one device after an RNBD server restart (the whole grace).
 */
class ExportTableTest {
    private static ExportConfig export(String name) {
        return new ExportConfig(name, "memory", false, Set.of(), 0, Map.of("id", name, "size", "1048576"));
    }

    @Test
    void anOpenThatMissedAnAddRetriesAtOnceInsteadOfWaitingOutTheGrace() {
        ExportTable table = new ExportTable(new FakeScheduler());
        table.openGraceMs(10_000);
        AtomicInteger retried = new AtomicInteger();

        long seen = table.added(); // the OPEN reads it, then looks and misses...
        table.add(export("late")); // ...the export arrives before the OPEN parks...
        assertEquals(ExportTable.Parked.RETRIED, table.park(seen, retried::incrementAndGet));
        assertEquals(1, retried.get(), "tried again at once");
        assertEquals(0, table.parkedOpens(), "nothing left to wait out the grace");

        // an OPEN with nothing added since its lookup waits, and the next add wakes it
        assertEquals(ExportTable.Parked.WAITS, table.park(table.added(), retried::incrementAndGet));
        assertEquals(1, table.parkedOpens());
        table.add(export("later"));
        assertEquals(2, retried.get());
        assertEquals(0, table.parkedOpens());
    }

    @Test
    void afterTheGraceNothingParks() {
        FakeScheduler scheduler = new FakeScheduler();
        ExportTable table = new ExportTable(scheduler);
        table.openGraceMs(10);
        scheduler.advance(java.time.Duration.ofMillis(10));
        assertEquals(ExportTable.Parked.NO, table.park(table.added(), () -> { }));
        assertEquals(0, table.parkedOpens());
    }
}

package io.rnbd.rnbd.server.internal;

import io.rnbd.testkit.FakeScheduler;
import org.junit.jupiter.api.Test;

import io.rnbd.common.Provider;
import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.testkit.block.FakeBlockDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The open grace's one race: an OPEN looks for its export and finds nothing, the export is
 * added (waking nobody: nothing is parked yet), and only then does the OPEN park. Seen in
 * SwapIT as a 10 s stall of one device after an RNBD server restart (the whole grace). And who
 * frees what a backend keeps for an export (a memory export's pages): its removal, never its
 * going offline or the server's stop.
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

    /** A backend that records what the table asks of it. */
    private static final class Recording implements BlockBackend {
        final List<String> calls = new ArrayList<>();

        @Override
        public String type() {
            return "memory";
        }

        @Override
        public BlockDevice open(Map<String, String> params, boolean readOnly) {
            throw new AssertionError("the server opens by export name");
        }

        @Override
        public BlockDevice open(String export, Map<String, String> params, boolean readOnly) {
            calls.add("open " + export);
            return new FakeBlockDevice(new byte[1 << 20]);
        }

        @Override
        public void release(String export) {
            calls.add("release " + export);
        }
    }

    @Test
    void aRemovedExportIsReleasedAndNothingElseReleasesIt() {
        ExportTable table = new ExportTable(new FakeScheduler());
        Recording backend = new Recording();
        table.backendAdded("memory", backend);
        table.add(export("kept"));
        table.add(export("gone"));
        table.backendRemoved("memory", backend); // offline: nothing released
        table.backendAdded("memory", backend);
        table.remove("gone");
        table.close(); // the server stops: its exports close, what they keep stays
        assertEquals(List.of("open kept", "open gone", "open kept", "open gone", "release gone"), backend.calls);
    }

    @Test
    void anExportRemovedWhileItsBackendIsAwayIsReleasedWhenOneComesBeforeAnythingOpens() {
        ExportTable table = new ExportTable(new FakeScheduler());
        Recording backend = new Recording();
        table.add(export("mem0"));
        table.remove("mem0");
        table.add(export("mem0")); // added again under the same name: it must start anew
        table.backendAdded("memory", backend);
        assertEquals(List.of("release mem0", "open mem0"), backend.calls);
        table.backendRemoved("memory", backend);
        table.backendAdded("memory", backend);
        assertEquals(List.of("release mem0", "open mem0", "open mem0"), backend.calls, "released once");
    }

    /** rnbd:backends: every backend by its announced name and bundle, the serving one used by its exports. */
    @Test
    void backendsAreListedByNameWithTheirBundlesAndExports() {
        ExportTable table = new ExportTable(new FakeScheduler());
        Recording mine = new Recording();
        Recording second = new Recording();
        table.backendAdded("simple-file", mine, new Provider("simple-file", "org.example.rnbd.backend.simplefile",
                "1.0.0", 91, 0));
        table.backendAdded("memory", new Recording(), new Provider("memory", "rnbd-backend-memory", "0.1.0", 62, 0));
        table.backendAdded("simple-file", second, new Provider("simple-file", "a-second-one", "2.0.0", 92, 0));
        table.add(new ExportConfig("x", "simple-file", false, Set.of(), 0, Map.of()));
        assertEquals(List.of(new Provider("memory", "rnbd-backend-memory", "0.1.0", 62, 0),
                new Provider("simple-file", "org.example.rnbd.backend.simplefile", "1.0.0", 91, 0, List.of("x")),
                new Provider("simple-file", "a-second-one", "2.0.0", 92, 0)), table.providers());
        table.backendRemoved("simple-file", mine); // its jar deleted: the next one of the name serves
        assertEquals(List.of(new Provider("memory", "rnbd-backend-memory", "0.1.0", 62, 0),
                new Provider("simple-file", "a-second-one", "2.0.0", 92, 0, List.of("x"))), table.providers());
    }
}

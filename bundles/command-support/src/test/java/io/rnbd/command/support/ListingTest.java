package io.rnbd.command.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rnbd.telemetry.api.Column;
import io.rnbd.telemetry.api.Table;
import io.rnbd.telemetry.api.TableSchema;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A listing prints a telemetry table: --json from the schema's console keys, cells by column key. */
class ListingTest {
    enum State { UP, DOWN }

    private static List<Column> sessionColumns() {
        return new ArrayList<>(List.of(
                Column.id("session", "name", "Session"),
                Column.state("state", "state", "State", State.class),
                Column.flag("ro", "read_only", "ro", "Read-only"),
                Column.list("peers", "peers", "Peers"),
                Column.counter("reads", "stats.reads", "reads", "Reads"),
                Column.nanos("rtt", "stats.rtt_ns", "rtt", "RTT"),
                Column.histogram("latency", "latency", "Latency, not on the console")));
    }

    private static final TableSchema PATH = new TableSchema("path", "Paths", List.of(
            Column.id("session", "session", "Session"), Column.id("path", "name", "Path"),
            Column.gauge("inflight", "inflight", "inflight", "In flight")));

    private static Table sessions(List<Column> columns, List<List<Object>> rows) {
        return new Table(new TableSchema("session", "Sessions", columns), rows);
    }

    private static List<Object> row(Object... values) {
        return Arrays.asList(values);
    }

    private static final Table SESSIONS = sessions(sessionColumns(), List.of(
            row("a\nb", "UP", true, List.of("x", "y"), 7L, 1500L, null),
            row("c", "DOWN", false, List.of(), 0L, 0L, null)));

    private static final Table PATHS = new Table(PATH, List.of(row("a\nb", "p1", 3L), row("a\nb", "p2", 4L),
            row("c", "p3", 5L)));

    private static String print(Listing l, boolean json) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        l.print(new PrintStream(bytes, true, StandardCharsets.UTF_8), json);
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void jsonHasEveryConsoleKeyOfTheSchemaNestedByDotsAndParsesBack() {
        List<Map<String, Object>> back = MiniJson.array(print(Listing.of(SESSIONS).nest("paths", PATHS), true));
        assertEquals(2, back.size());
        Map<String, Object> a = back.get(0);
        assertEquals(List.of("name", "state", "read_only", "peers", "stats", "paths"), List.copyOf(a.keySet()));
        assertEquals("a\nb", a.get("name"));
        assertEquals("UP", a.get("state"));
        assertEquals(true, a.get("read_only"));
        assertEquals(List.of("x", "y"), a.get("peers"));
        assertEquals(Map.of("reads", 7L, "rtt_ns", 1500L), a.get("stats"));
        // the paths of this session, without the session they repeat
        assertEquals(List.of(Map.of("name", "p1", "inflight", 3L), Map.of("name", "p2", "inflight", 4L)), a.get("paths"));
        assertEquals(List.of(Map.of("name", "p3", "inflight", 5L)), back.get(1).get("paths"));
    }

    @Test
    void aColumnAddedToTheSchemaShowsInTheJsonWithoutAChangeToTheListing() {
        List<Column> more = sessionColumns();
        more.add(Column.gauge("queue_depth", "queue_depth", "queue_depth", "Queue depth"));
        Table t = sessions(more, List.of(row("s", "UP", false, List.of(), 1L, 2L, null, 128L)));
        Map<String, Object> s = MiniJson.array(print(Listing.of(t), true)).get(0);
        assertEquals(128L, s.get("queue_depth"));
    }

    @Test
    void jsonCanBeRestrictedToSomeTopLevelKeys() {
        Map<String, Object> s = MiniJson.array(print(Listing.of(SESSIONS).json("name", "stats"), true)).get(1);
        assertEquals(List.of("name", "stats"), List.copyOf(s.keySet()));
    }

    @Test
    void whereKeepsTheRowsOfOneIdentity() {
        assertEquals(List.of("p3"), Listing.of(PATHS).where("session", "c").rows().stream().map(r -> r.text("path"))
                .toList());
        assertEquals(3, Listing.of(PATHS).where("session", null).rows().size());
    }

    @Test
    void tableCellsShowEachTypeAsTheConsoleReadsItOneLinePerRow() {
        String out = print(Listing.of(SESSIONS).nest("paths", PATHS).column("SESSION", "session")
                .column("STATE", "state").column("RO", "ro").column("PEERS", "peers").column("RTT us", "rtt")
                .column("PATHS", r -> r.children("paths").size()), false);
        List<List<String>> cells = Out.cells(out);
        assertEquals(List.of("SESSION", "STATE", "RO", "PEERS", "RTT us", "PATHS"), cells.get(0), out);
        assertEquals(List.of("a b", "up", "yes", "x,y", "1.5", "2"), cells.get(1), out);
        assertEquals(List.of("c", "down", "no", "-", "", "1"), cells.get(2), out);
        assertEquals(3, cells.size(), out);
    }

    @Test
    void aCellOfAColumnTheTableLacksFailsAtOnce() {
        assertThrows(IllegalArgumentException.class, () -> Listing.of(SESSIONS).column("X", "nope"));
        Listing l = Listing.of(SESSIONS).column("X", r -> r.get("nope"));
        assertThrows(IllegalArgumentException.class, () -> print(l, false));
    }

    @Test
    void withoutTheTelemetryServiceAListingSaysSo() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Listing.read(null, "session"));
        assertEquals("the telemetry service is not running (bundle telemetry)", e.getMessage());
    }
}

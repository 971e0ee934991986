package io.rnbd.telemetry.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class SchemaNamesTest {
    private final TableSchema path = new TableSchema("rtrs_client_path", "paths", List.of(
            Column.id("session", "session", "s"), Column.id("path", "name", "p"),
            Column.text("hca_name", "hca_name", "h"),
            Column.counter("reads", "reads", "reads", "r"),
            Column.counter("read_bytes", "read_bytes", "read_bytes", "rb"),
            Column.gauge("inflight", "inflight", "inflight", "i"),
            Column.nanos("hb_rtt_ns", "hb_rtt_ns", "heartbeat_rtt", "h"),
            Column.histogram("io_latency", "io_latency", "l"),
            Column.counters("counters", "counters", "counter", "c")));

    @Test
    void prometheusFamiliesFollowTheConventions() {
        assertEquals("rnbd_rtrs_client_path_reads_total", path.family(path.column("reads")));
        assertEquals("rnbd_rtrs_client_path_read_bytes_total", path.family(path.column("read_bytes")));
        assertEquals("rnbd_rtrs_client_path_inflight", path.family(path.column("inflight")));
        assertEquals("rnbd_rtrs_client_path_heartbeat_rtt_seconds", path.family(path.column("hb_rtt_ns")));
        assertEquals("rnbd_rtrs_client_path_io_latency_seconds", path.family(path.column("io_latency")));
        assertEquals("rnbd_rtrs_client_path_counter_total", path.family(path.column("counters")));
        assertEquals("rnbd_rtrs_client_path_info", path.family(path.column("hca_name")));
        assertEquals("rnbd_export", new TableSchema("rnbd_export", "e", List.of()).metricPrefix());
    }

    @Test
    void jmxNamesAreCamelCaseAttributesAndDashedTypes() {
        assertEquals("ReadBytes", path.column("read_bytes").attribute());
        assertEquals("HbRttNs", path.column("hb_rtt_ns").attribute());
        assertEquals("rtrs-client-path", path.jmxType());
        assertEquals(List.of("session", "path"), path.ids().stream().map(Column::key).toList());
    }

    @Test
    void malformedSchemasAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new TableSchema("t", "h", List.of(
                Column.text("a", "a", "a"), Column.id("b", "b", "b"))), "ids first");
        assertThrows(IllegalArgumentException.class, () -> new TableSchema("t", "h", List.of(
                Column.text("a", "a", "a"), Column.text("a", "a", "a"))), "keys repeat");
        assertThrows(IllegalArgumentException.class, () -> Column.gauge("Bad-Key", "", "x", "h"));
        assertThrows(IllegalArgumentException.class, () -> Column.gauge("x", "", "", "a value needs a metric"));
        assertThrows(IllegalArgumentException.class, () -> path.column("nope"));
        assertThrows(IllegalArgumentException.class, () -> new Table(path, List.of(List.of("too short"))));
    }

    /** The console's --json is generated from the console keys: one a JSON document can hold. */
    @Test
    void consoleKeysAreDistinctAndNestOneLevel() {
        Column.counter("reads", "stats.reads", "reads", "nested in stats");
        assertThrows(IllegalArgumentException.class, () -> Column.counter("reads", "Stats.Reads", "reads", "r"));
        assertThrows(IllegalArgumentException.class, () -> Column.counter("reads", "a.b.c", "reads", "r"));
        assertThrows(IllegalArgumentException.class, () -> new TableSchema("t", "h", List.of(
                Column.gauge("a", "x", "a", "a"), Column.gauge("b", "x", "b", "b"))), "a console key twice");
        assertThrows(IllegalArgumentException.class, () -> new TableSchema("t", "h", List.of(
                Column.gauge("a", "stats", "a", "a"), Column.gauge("b", "stats.b", "b", "b"))), "a key and a group");
        new TableSchema("t", "h", List.of(Column.gauge("a", "", "a", "a"), Column.gauge("b", "", "b", "b")));
    }
}

package io.rnbd.command.support;

import io.rnbd.rdma.api.RdmaAdmin;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.telemetry.api.Column;
import io.rnbd.telemetry.api.Table;
import io.rnbd.telemetry.api.Telemetry;
import io.rnbd.telemetry.internal.Sources;
import io.rnbd.telemetry.internal.TelemetryReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Assertions that a console listing shows what the telemetry service reads for JMX, /metrics and
 * the dashboard: its --json has exactly the console keys of the table's columns, with the
 * table's values, row by row; its text table one row per telemetry row. A listing that maps a
 * DTO by hand again, or a column the console drops, fails them.
 */
public final class SameAsTelemetry {
    private SameAsTelemetry() {
    }

    /** The telemetry service over the tests' admins (null: not running), as the telemetry bundle builds it. */
    public static Telemetry over(RdmaAdmin rdma, RtrsClientAdmin rtrsClient, RtrsServerAdmin rtrsServer,
            RnbdServerAdmin rnbdServer, RnbdClientAdmin rnbdClient) {
        return new TelemetryReader(new Sources(() -> rdma, () -> rtrsClient, () -> rtrsServer, () -> rnbdServer,
                () -> rnbdClient, () -> null));
    }

    /** One of its tables, read now. */
    public static Table table(Telemetry telemetry, String name) {
        return telemetry.table(name).orElseThrow();
    }

    /**
     * @param nested the key of another table's rows inside each object (compared on their own), or null
     * @param skip   the leading identity columns a nested object leaves out (0 for a listing of its own)
     */
    public static void assertJson(String json, Table table, String nested, int skip) {
        assertJson(MiniJson.array(json), table, nested, skip, json);
    }

    @SuppressWarnings("unchecked")
    private static void assertJson(List<Map<String, Object>> objects, Table table, String nested, int skip,
            String json) {
        if (objects.size() != table.rows().size()) {
            throw new AssertionError(objects.size() + " objects, " + table.rows().size() + " rows in "
                    + table.schema().name() + ": " + json);
        }
        List<Column> columns = table.schema().columns();
        TreeSet<String> expected = new TreeSet<>();
        for (int i = skip; i < columns.size(); i++) {
            if (!columns.get(i).console().isEmpty()) {
                expected.add(columns.get(i).console());
            }
        }
        for (int r = 0; r < objects.size(); r++) {
            TreeSet<String> keys = new TreeSet<>();
            flatten("", objects.get(r), nested, keys);
            if (!keys.equals(expected)) {
                throw new AssertionError(table.schema().name() + ": the console's keys " + keys
                        + ", the table's console keys " + expected + ": " + json);
            }
            for (int i = skip; i < columns.size(); i++) {
                String key = columns.get(i).console();
                if (key.isEmpty()) {
                    continue;
                }
                Object shown = at(objects.get(r), key);
                Object read = table.rows().get(r).get(i);
                if (!java.util.Objects.equals(shown, read)) {
                    throw new AssertionError(table.schema().name() + " row " + r + " " + key + ": the console shows "
                            + shown + ", telemetry read " + read + ": " + json);
                }
            }
        }
    }

    /** Each object's {@code key} holds the rows of {@code child} that belong to its row, without the ids they repeat. */
    @SuppressWarnings("unchecked")
    public static void assertNested(String json, Table parent, String key, Table child) {
        List<Map<String, Object>> objects = MiniJson.array(json);
        int ids = parent.schema().ids().size();
        for (int r = 0; r < objects.size(); r++) {
            List<Object> row = parent.rows().get(r);
            Table mine = new Table(child.schema(), child.rows().stream()
                    .filter(c -> c.subList(0, ids).equals(row.subList(0, ids))).toList());
            assertJson((List<Map<String, Object>>) objects.get(r).get(key), mine, null, ids, json);
        }
    }

    /** The text table has one row per telemetry row, the row's first identity in its first cell, in order. */
    public static void assertTable(String text, Table table) {
        List<List<String>> cells = Out.cells(text);
        List<String> shown = new ArrayList<>();
        cells.subList(1, cells.size()).forEach(r -> shown.add(r.get(0)));
        List<String> read = new ArrayList<>();
        table.rows().forEach(r -> read.add(String.valueOf(r.get(0)).replace('\n', ' ')));
        if (!shown.equals(read)) {
            throw new AssertionError("the console's rows " + shown + ", telemetry's " + read + ":\n" + text);
        }
    }

    @SuppressWarnings("unchecked")
    private static void flatten(String prefix, Map<String, Object> object, String nested, TreeSet<String> keys) {
        for (Map.Entry<String, Object> e : object.entrySet()) {
            if (prefix.isEmpty() && e.getKey().equals(nested)) {
                continue;
            }
            if (e.getValue() instanceof Map && !e.getKey().equals("counters")) {
                flatten(prefix + e.getKey() + ".", (Map<String, Object>) e.getValue(), null, keys);
            } else {
                keys.add(prefix + e.getKey());
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static Object at(Map<String, Object> object, String dotted) {
        Object v = object;
        for (String part : dotted.split("\\.")) {
            v = ((Map<String, Object>) v).get(part);
        }
        return v;
    }
}

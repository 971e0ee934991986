package io.rnbd.command.support;

import io.rnbd.telemetry.api.Column;
import io.rnbd.telemetry.api.Table;
import io.rnbd.telemetry.api.Telemetry;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import org.apache.karaf.shell.support.table.ShellTable;

/**
 * A console listing of one telemetry {@link Table}: the rows the {@code Telemetry} service read
 * for JMX, /metrics and the dashboard, so a column is defined once (in the telemetry bundle's
 * catalog) for all of them. {@code --json} prints every column under its {@link Column#console()}
 * key, generated from the schema (a dotted key nests: {@code stats.reads}); a column added to the
 * catalog appears there without a change here. The text table shows the cells a command picks,
 * by column key, through Karaf's {@link ShellTable}.
 */
public final class Listing {
    private final Table table;
    private final List<List<Object>> rows;
    private final Map<String, Listing> children = new LinkedHashMap<>();
    private final List<String> headers = new ArrayList<>();
    private final List<Function<Row, Object>> cells = new ArrayList<>();
    private Set<String> jsonKeys;

    private Listing(Table table, List<List<Object>> rows) {
        this.table = table;
        this.rows = rows;
    }

    /** One table read now from the telemetry service; an error line if the service is not running. */
    public static Table read(Telemetry telemetry, String name) {
        if (telemetry == null) {
            throw new IllegalStateException("the telemetry service is not running (bundle telemetry)");
        }
        return telemetry.table(name).orElseThrow(() -> new IllegalStateException("no telemetry table " + name));
    }

    public static Listing of(Table table) {
        return new Listing(table, table.rows());
    }

    /** Only the rows whose column {@code key} is {@code value} (null: all). */
    public Listing where(String key, Object value) {
        if (value == null) {
            return this;
        }
        int i = table.schema().index(key);
        Listing l = new Listing(table, rows.stream().filter(r -> Objects.equals(String.valueOf(r.get(i)),
                String.valueOf(value))).toList());
        l.children.putAll(children);
        l.headers.addAll(headers);
        l.cells.addAll(cells);
        l.jsonKeys = jsonKeys;
        return l;
    }

    /**
     * The rows of {@code child} that belong to a row (their leading identity columns equal the
     * row's), under {@code key} in the row's JSON without the identity they repeat, and as
     * {@link Row#children(String)} for the cells.
     */
    public Listing nest(String key, Table child) {
        children.put(key, of(child));
        return this;
    }

    /** Restrict {@code --json} to these top-level keys (a listing that shows part of a table). */
    public Listing json(String... keys) {
        jsonKeys = Set.of(keys);
        return this;
    }

    /** A table column showing column {@code key} as its type reads best (states in lower case ...). */
    public Listing column(String header, String key) {
        Column c = table.schema().column(key);
        return column(header, r -> format(c, r.get(key)));
    }

    /** A table column computed from a row (several columns in one cell, a unit). */
    public Listing column(String header, Function<Row, Object> cell) {
        headers.add(header);
        cells.add(cell);
        return this;
    }

    public List<Row> rows() {
        return rows.stream().map(Row::new).toList();
    }

    public boolean isEmpty() {
        return rows.isEmpty();
    }

    public void print(PrintStream out, boolean json) {
        if (json) {
            out.println(Json.write(objects()));
        } else {
            shellTable().print(out);
        }
    }

    /** The rows as JSON objects, one per row, as {@code --json} prints them. */
    public List<Map<String, Object>> objects() {
        return rows.stream().map(r -> json(r, 0)).toList();
    }

    public ShellTable shellTable() {
        ShellTable t = new ShellTable();
        headers.forEach(t::column);
        for (Row r : rows()) {
            t.addRow().addContent(cells.stream().map(c -> oneLine(c.apply(r))).toArray());
        }
        return t;
    }

    private Map<String, Object> json(List<Object> row, int skip) {
        Map<String, Object> m = new LinkedHashMap<>();
        List<Column> columns = table.schema().columns();
        for (int i = skip; i < columns.size(); i++) {
            String key = columns.get(i).console();
            if (!key.isEmpty() && (jsonKeys == null || jsonKeys.contains(key.split("\\.")[0]))) {
                put(m, key, row.get(i));
            }
        }
        for (Map.Entry<String, Listing> e : children.entrySet()) {
            if (jsonKeys == null || jsonKeys.contains(e.getKey())) {
                int ids = table.schema().ids().size();
                m.put(e.getKey(), e.getValue().belongingTo(row, ids).stream().map(c -> e.getValue().json(c, ids))
                        .toList());
            }
        }
        return m;
    }

    @SuppressWarnings("unchecked")
    private static void put(Map<String, Object> m, String dotted, Object value) {
        String[] parts = dotted.split("\\.");
        Map<String, Object> at = m;
        for (int i = 0; i < parts.length - 1; i++) {
            at = (Map<String, Object>) at.computeIfAbsent(parts[i], k -> new LinkedHashMap<String, Object>());
        }
        at.put(parts[parts.length - 1], value);
    }

    private List<List<Object>> belongingTo(List<Object> parent, int ids) {
        return rows.stream().filter(r -> r.subList(0, ids).equals(parent.subList(0, ids))).toList();
    }

    /** How the table shows a value of column {@code c}. */
    public static String format(Column c, Object v) {
        if (v == null) {
            return "";
        }
        return switch (c.type()) {
            case STATE -> v.toString().toLowerCase(Locale.ROOT);
            case LIST -> ((List<?>) v).isEmpty() ? "-" : String.join(",", ((List<?>) v).stream().map(String::valueOf)
                    .toList());
            case FLAG -> Boolean.TRUE.equals(v) ? "yes" : "no";
            case NANOS -> Formats.micros(((Number) v).longValue());
            default -> v.toString();
        };
    }

    // a name with a newline must not break the table's rows apart
    private static String oneLine(Object cell) {
        return cell == null ? "" : cell.toString().replace('\n', ' ').replace('\r', ' ').replace('\t', ' ');
    }

    /** One row of the listing, its values by column key. */
    public final class Row {
        private final List<Object> values;

        private Row(List<Object> values) {
            this.values = values;
        }

        /** The value of column {@code key}; IllegalArgumentException if the table has no such column. */
        public Object get(String key) {
            return values.get(table.schema().index(key));
        }

        public long number(String key) {
            Object v = get(key);
            return v == null ? 0 : ((Number) v).longValue();
        }

        public String text(String key) {
            Object v = get(key);
            return v == null ? "" : v.toString();
        }

        @SuppressWarnings("unchecked")
        public List<String> list(String key) {
            Object v = get(key);
            return v == null ? List.of() : (List<String>) v;
        }

        /** The value of column {@code key} as the table shows it by default. */
        public String shown(String key) {
            return format(table.schema().column(key), get(key));
        }

        /** The rows nested under {@code key} ({@link #nest}) that belong to this one. */
        public List<Listing.Row> children(String key) {
            Listing child = children.get(key);
            if (child == null) {
                throw new IllegalArgumentException("nothing nested under " + key);
            }
            return child.belongingTo(values, table.schema().ids().size()).stream().map(r -> child.new Row(r)).toList();
        }
    }
}

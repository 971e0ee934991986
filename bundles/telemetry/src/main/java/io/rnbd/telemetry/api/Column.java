package io.rnbd.telemetry.api;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * One field of a {@link TableSchema}.
 *
 * @param key     the field's name in the dashboard's JSON and, for {@link ColumnType#ID},
 *                {@link ColumnType#TEXT}, {@link ColumnType#LIST}, its Prometheus label
 * @param console the key the console's {@code --json} prints this field under, a dotted one
 *                ({@code stats.reads}) within an object of the row; "" when the console does
 *                not show it, as latency histograms. The console's listings print the
 *                telemetry rows themselves, so this is the whole of the console's mapping.
 * @param type    what the values are
 * @param metric  the Prometheus metric name within the table (without prefix and unit or
 *                {@code _total} suffix); "" for labels
 * @param help    one line for HELP, MBean descriptions and docs
 * @param states  the possible values of a {@link ColumnType#STATE}, else empty
 */
public record Column(String key, String console, ColumnType type, String metric, String help, List<String> states) {
    public Column {
        states = List.copyOf(states);
        if (!key.matches("[a-z][a-z0-9_]*") || !metric.matches("([a-z][a-z0-9_]*)?")
                || !console.matches("([a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)?)?")) {
            throw new IllegalArgumentException("bad column name " + key + "/" + console + "/" + metric);
        }
        boolean label = type == ColumnType.ID || type == ColumnType.TEXT || type == ColumnType.LIST;
        if (label != metric.isEmpty()) {
            throw new IllegalArgumentException(key + ": labels have no metric name, values need one");
        }
        if ((type == ColumnType.STATE) == states.isEmpty()) {
            throw new IllegalArgumentException(key + ": a state column, and only it, lists its states");
        }
    }

    public static Column id(String key, String console, String help) {
        return new Column(key, console, ColumnType.ID, "", help, List.of());
    }

    public static Column text(String key, String console, String help) {
        return new Column(key, console, ColumnType.TEXT, "", help, List.of());
    }

    public static Column list(String key, String console, String help) {
        return new Column(key, console, ColumnType.LIST, "", help, List.of());
    }

    public static Column state(String key, String console, String help, Class<? extends Enum<?>> states) {
        return new Column(key, console, ColumnType.STATE, key, help,
                Arrays.stream(states.getEnumConstants()).map(Enum::name).toList());
    }

    public static Column flag(String key, String console, String metric, String help) {
        return new Column(key, console, ColumnType.FLAG, metric, help, List.of());
    }

    public static Column gauge(String key, String console, String metric, String help) {
        return new Column(key, console, ColumnType.GAUGE, metric, help, List.of());
    }

    public static Column counter(String key, String console, String metric, String help) {
        return new Column(key, console, ColumnType.COUNTER, metric, help, List.of());
    }

    public static Column nanos(String key, String console, String metric, String help) {
        return new Column(key, console, ColumnType.NANOS, metric, help, List.of());
    }

    public static Column histogram(String key, String metric, String help) {
        return new Column(key, "", ColumnType.HISTOGRAM, metric, help, List.of());
    }

    public static Column counters(String key, String console, String metric, String help) {
        return new Column(key, console, ColumnType.COUNTERS, metric, help, List.of());
    }

    /** Whether this column is a Prometheus label (of every metric, or of {@code _info}). */
    public boolean isLabel() {
        return type == ColumnType.ID || type == ColumnType.TEXT || type == ColumnType.LIST;
    }

    /** The MBean attribute name: the key in upper camel case ({@code read_bytes} → {@code ReadBytes}). */
    public String attribute() {
        StringBuilder sb = new StringBuilder();
        for (String part : key.split("_")) {
            sb.append(part.substring(0, 1).toUpperCase(Locale.ROOT)).append(part.substring(1));
        }
        return sb.toString();
    }
}

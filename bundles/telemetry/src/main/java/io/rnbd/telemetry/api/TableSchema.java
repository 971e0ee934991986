package io.rnbd.telemetry.api;

import java.util.List;

/**
 * A kind of object the appliance shows (an RDMA device, a client path, an export ...): its
 * columns, identity first. Names are lower case with underscores; the Prometheus metrics of
 * table {@code rtrs_client_path} start with {@code rnbd_rtrs_client_path_}, those of
 * {@code rnbd_export} with {@code rnbd_export_}; its MBeans are
 * {@code io.rnbd:type=rtrs-client-path,session=…,path=…}.
 *
 * @param name    the table's name
 * @param help    one line: what a row is, and the console commands that show it
 * @param columns identity ({@link ColumnType#ID}) columns first; none for a singleton; their
 *                console keys ({@link Column#console()}) distinct, none also the group of another
 */
public record TableSchema(String name, String help, List<Column> columns) {
    public static final String METRIC_PREFIX = "rnbd_";

    public TableSchema {
        columns = List.copyOf(columns);
        if (!name.matches("[a-z][a-z0-9_]*")) {
            throw new IllegalArgumentException("bad table name " + name);
        }
        boolean idsDone = false;
        for (Column c : columns) {
            if (c.type() != ColumnType.ID) {
                idsDone = true;
            } else if (idsDone) {
                throw new IllegalArgumentException(name + ": identity columns come first");
            }
        }
        if (columns.stream().map(Column::key).distinct().count() != columns.size()) {
            throw new IllegalArgumentException(name + ": column keys repeat");
        }
        // the console's --json nests a dotted key: a key may not repeat, nor be a group's name too
        List<String> console = columns.stream().map(Column::console).filter(k -> !k.isEmpty()).toList();
        for (String k : console) {
            if (console.stream().filter(k::equals).count() > 1 || console.stream().anyMatch(o -> o.startsWith(k + "."))) {
                throw new IllegalArgumentException(name + ": console key " + k + " repeats or names a group");
            }
        }
    }

    public List<Column> ids() {
        return columns.stream().filter(c -> c.type() == ColumnType.ID).toList();
    }

    /** The column named {@code key}; IllegalArgumentException if there is none. */
    public Column column(String key) {
        return columns.stream().filter(c -> c.key().equals(key)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException(name + " has no column " + key));
    }

    public int index(String key) {
        return columns.indexOf(column(key));
    }

    /** {@code rnbd_} and the name, without a second {@code rnbd_} ({@code rnbd_export} → {@code rnbd_export}). */
    public String metricPrefix() {
        return METRIC_PREFIX + (name.startsWith(METRIC_PREFIX) ? name.substring(METRIC_PREFIX.length()) : name);
    }

    /**
     * The Prometheus metric family of a value column: the prefix, the column's metric name and
     * the unit or counter suffix ({@code rnbd_rtrs_client_path_reads_total},
     * {@code rnbd_rtrs_client_path_heartbeat_rtt_seconds}); {@code …_info} for the labels.
     */
    public String family(Column c) {
        String base = metricPrefix() + "_" + (c.isLabel() ? "info" : c.metric());
        return switch (c.type()) {
            case COUNTER, COUNTERS -> base + "_total";
            case NANOS, HISTOGRAM -> base + "_seconds";
            default -> base;
        };
    }

    /** The MBean type: the name with dashes ({@code rtrs-client-path}). */
    public String jmxType() {
        return name.replace('_', '-');
    }
}

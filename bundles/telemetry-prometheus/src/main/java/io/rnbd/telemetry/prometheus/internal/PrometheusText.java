package io.rnbd.telemetry.prometheus.internal;

import io.rnbd.common.LatencyHistogram;
import io.rnbd.telemetry.api.Column;
import io.rnbd.telemetry.api.ColumnType;
import io.rnbd.telemetry.api.Table;
import io.rnbd.telemetry.api.TableSchema;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Telemetry tables in the Prometheus text exposition format 0.0.4. Per table: an
 * {@code _info} gauge carrying the text columns as labels, a state set per state column (one
 * sample per state, 1 for the current one), a gauge or counter per number, seconds for
 * durations, a histogram per latency column; identity columns label every sample. Every
 * family is written, with HELP and TYPE, even while it has no samples, so the names are
 * there to be found before the first session connects.
 */
public final class PrometheusText {
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
    private static final String[] LE;

    static {
        long[] bounds = LatencyHistogram.boundsNanos();
        LE = new String[bounds.length + 1];
        for (int i = 0; i < bounds.length; i++) {
            LE[i] = seconds(bounds[i]);
        }
        LE[bounds.length] = "+Inf";
    }

    private PrometheusText() {
    }

    public static String render(List<Table> tables) {
        StringBuilder out = new StringBuilder(16 * 1024);
        for (Table t : tables) {
            table(out, t);
        }
        return out.toString();
    }

    private static void table(StringBuilder out, Table t) {
        TableSchema schema = t.schema();
        List<Column> texts = schema.columns().stream()
                .filter(c -> c.type() == ColumnType.TEXT || c.type() == ColumnType.LIST).toList();
        if (!texts.isEmpty()) {
            String family = schema.family(texts.get(0));
            header(out, family, "gauge", schema.help() + "; the labels are its text fields, the value is 1");
            for (List<Object> row : t.rows()) {
                List<String[]> labels = ids(t, row);
                for (Column c : texts) {
                    labels.add(new String[] {c.key(), text(t.value(row, c.key()))});
                }
                sample(out, family, labels, "1");
            }
        }
        for (Column c : schema.columns()) {
            if (!c.isLabel()) {
                values(out, t, c);
            }
        }
    }

    private static void values(StringBuilder out, Table t, Column c) {
        String family = t.schema().family(c);
        switch (c.type()) {
            case STATE -> {
                header(out, family, "gauge", c.help() + "; 1 for the current state, 0 for the others");
                for (List<Object> row : t.rows()) {
                    Object now = t.value(row, c.key());
                    for (String state : c.states()) {
                        List<String[]> labels = ids(t, row);
                        labels.add(new String[] {c.metric(), state});
                        sample(out, family, labels, state.equals(now) ? "1" : "0");
                    }
                }
            }
            case HISTOGRAM -> {
                header(out, family, "histogram", c.help());
                for (List<Object> row : t.rows()) {
                    LatencyHistogram.Snapshot h = (LatencyHistogram.Snapshot) t.value(row, c.key());
                    if (h != null) {
                        histogram(out, family, ids(t, row), h);
                    }
                }
            }
            case COUNTERS -> {
                header(out, family, "counter", c.help());
                for (List<Object> row : t.rows()) {
                    Object v = t.value(row, c.key());
                    if (v instanceof Map<?, ?> m) {
                        for (Map.Entry<?, ?> e : m.entrySet()) {
                            List<String[]> labels = ids(t, row);
                            labels.add(new String[] {c.metric(), String.valueOf(e.getKey())});
                            sample(out, family, labels, String.valueOf(((Number) e.getValue()).longValue()));
                        }
                    }
                }
            }
            default -> {
                header(out, family, c.type() == ColumnType.COUNTER ? "counter" : "gauge", c.help());
                for (List<Object> row : t.rows()) {
                    Object v = t.value(row, c.key());
                    if (v != null) {
                        sample(out, family, ids(t, row), number(c, v));
                    }
                }
            }
        }
    }

    private static String number(Column c, Object v) {
        return switch (c.type()) {
            case FLAG -> Boolean.TRUE.equals(v) ? "1" : "0";
            case NANOS -> seconds(((Number) v).longValue());
            default -> String.valueOf(((Number) v).longValue());
        };
    }

    private static void histogram(StringBuilder out, String family, List<String[]> ids, LatencyHistogram.Snapshot h) {
        long[] counts = h.counts();
        long cumulative = 0;
        for (int i = 0; i < counts.length; i++) {
            cumulative += counts[i];
            List<String[]> labels = new ArrayList<>(ids);
            labels.add(new String[] {"le", LE[i]});
            sample(out, family + "_bucket", labels, Long.toString(cumulative));
        }
        sample(out, family + "_sum", ids, seconds(h.sumNanos()));
        sample(out, family + "_count", ids, Long.toString(cumulative));
    }

    /** Nanoseconds as exact decimal seconds (5000 → 0.000005), never in exponent form. */
    static String seconds(long nanos) {
        return BigDecimal.valueOf(nanos).movePointLeft(9).stripTrailingZeros().toPlainString();
    }

    private static List<String[]> ids(Table t, List<Object> row) {
        List<String[]> labels = new ArrayList<>();
        List<String> id = t.id(row);
        List<Column> ids = t.schema().ids();
        for (int i = 0; i < ids.size(); i++) {
            labels.add(new String[] {ids.get(i).key(), id.get(i)});
        }
        return labels;
    }

    private static String text(Object v) {
        if (v == null) {
            return "";
        }
        return v instanceof List<?> l ? String.join(",", l.stream().map(String::valueOf).toList()) : v.toString();
    }

    private static void header(StringBuilder out, String family, String type, String help) {
        out.append("# HELP ").append(family).append(' ');
        for (char ch : help.toCharArray()) {
            if (ch == '\\') {
                out.append("\\\\");
            } else if (ch == '\n') {
                out.append("\\n");
            } else {
                out.append(ch);
            }
        }
        out.append('\n').append("# TYPE ").append(family).append(' ').append(type).append('\n');
    }

    private static void sample(StringBuilder out, String name, List<String[]> labels, String value) {
        out.append(name);
        if (!labels.isEmpty()) {
            out.append('{');
            for (int i = 0; i < labels.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                out.append(labels.get(i)[0]).append("=\"");
                escapeLabel(out, labels.get(i)[1]);
                out.append('"');
            }
            out.append('}');
        }
        out.append(' ').append(value).append('\n');
    }

    private static void escapeLabel(StringBuilder out, String v) {
        for (char ch : v.toCharArray()) {
            switch (ch) {
                case '\\' -> out.append("\\\\");
                case '"' -> out.append("\\\"");
                case '\n' -> out.append("\\n");
                default -> out.append(ch);
            }
        }
    }
}

package io.rnbd.telemetry.dashboard.internal;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import io.rnbd.common.LatencyHistogram;
import io.rnbd.telemetry.api.Column;
import io.rnbd.telemetry.api.ColumnType;
import io.rnbd.telemetry.api.Table;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the dashboard page polls: every telemetry table as rows of column key → value, raw
 * numbers (bytes, nanoseconds, counters since start), latency histograms as bucket counts.
 * Rates and percentiles are the page's arithmetic between two polls, so the server keeps
 * nothing between requests.
 */
public final class StateJson {
    // nulls kept: a field the source had nothing for is there, as null, as the page expects
    private static final Gson GSON = new GsonBuilder().serializeNulls().create();

    private StateJson() {
    }

    /** {"error": message}: what the API answers instead of the state. */
    public static String error(String message) {
        return GSON.toJson(Map.of("error", message));
    }

    public static String render(List<Table> tables, String user, long timeMillis) {
        Map<String, Object> byName = new LinkedHashMap<>();
        for (Table t : tables) {
            List<Object> columns = new ArrayList<>();
            for (Column c : t.schema().columns()) {
                columns.add(obj("key", c.key(), "type", c.type().name(), "help", c.help()));
            }
            List<Object> rows = new ArrayList<>();
            for (List<Object> row : t.rows()) {
                Map<String, Object> m = new LinkedHashMap<>();
                for (int i = 0; i < row.size(); i++) {
                    Column c = t.schema().columns().get(i);
                    m.put(c.key(), value(c, row.get(i)));
                }
                rows.add(m);
            }
            byName.put(t.schema().name(), obj("help", t.schema().help(), "columns", columns, "rows", rows));
        }
        List<Long> bounds = new ArrayList<>();
        for (long b : LatencyHistogram.boundsNanos()) {
            bounds.add(b);
        }
        return GSON.toJson(obj("time_ms", timeMillis, "user", user, "latency_bounds_ns", bounds, "tables", byName));
    }

    private static Object value(Column c, Object v) {
        if (c.type() == ColumnType.HISTOGRAM && v instanceof LatencyHistogram.Snapshot h) {
            List<Long> counts = new ArrayList<>();
            for (long n : h.counts()) {
                counts.add(n);
            }
            return obj("counts", counts, "count", h.count(), "sum_ns", h.sumNanos());
        }
        return v;
    }

    private static Map<String, Object> obj(Object... keysAndValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }
}

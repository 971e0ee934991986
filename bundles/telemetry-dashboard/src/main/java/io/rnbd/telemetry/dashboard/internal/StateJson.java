package io.rnbd.telemetry.dashboard.internal;

import io.rnbd.command.support.Json;
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
    private StateJson() {
    }

    public static String render(List<Table> tables, String user, long timeMillis) {
        Map<String, Object> byName = new LinkedHashMap<>();
        for (Table t : tables) {
            List<Object> columns = new ArrayList<>();
            for (Column c : t.schema().columns()) {
                columns.add(Json.obj("key", c.key(), "type", c.type(), "help", c.help()));
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
            byName.put(t.schema().name(), Json.obj("help", t.schema().help(), "columns", columns, "rows", rows));
        }
        List<Long> bounds = new ArrayList<>();
        for (long b : LatencyHistogram.boundsNanos()) {
            bounds.add(b);
        }
        return Json.write(Json.obj("time_ms", timeMillis, "user", user, "latency_bounds_ns", bounds,
                "tables", byName));
    }

    private static Object value(Column c, Object v) {
        if (c.type() == ColumnType.HISTOGRAM && v instanceof LatencyHistogram.Snapshot h) {
            List<Long> counts = new ArrayList<>();
            for (long n : h.counts()) {
                counts.add(n);
            }
            return Json.obj("counts", counts, "count", h.count(), "sum_ns", h.sumNanos());
        }
        return v;
    }
}

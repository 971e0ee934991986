package io.rnbd.loadgen;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import io.rnbd.common.LatencyHistogram;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Console text of a load run: the live progress line, the results table and JSON (through Gson). */
public final class LoadReport {
    /** Nulls kept (a run that did not stop has no {@code ended_by}), no HTML escapes: a script reads this. */
    private static final Gson GSON = new GsonBuilder().serializeNulls().disableHtmlEscaping().create();

    private LoadReport() {
    }

    public static String describe(String device, LoadSpec spec) {
        StringBuilder sb = new StringBuilder(device).append(": ").append(spec.workload());
        if (spec.readPercent() > 0 && spec.readPercent() < 100) {
            sb.append(' ').append(spec.readPercent()).append("% reads");
        }
        sb.append(", bs ").append(Units.size(spec.blockSize())).append(", qd ").append(spec.queueDepth())
                .append(", batch ").append(spec.batch());
        if (!spec.duration().isZero()) {
            sb.append(", ").append(fmt(spec.duration().toMillis() / 1000.0)).append(" s");
        }
        if (spec.ioCount() > 0) {
            sb.append(", ").append(spec.ioCount()).append(" IOs");
        }
        if (spec.verify()) {
            sb.append(", verify");
        }
        return sb.toString();
    }

    public static String progressLine(LoadProgress p) {
        return String.format(Locale.ROOT, "[%5.0f s] %10.0f IOPS %9.1f MiB/s  ios %d  errors %d  mismatches %d",
                p.elapsedNanos() / 1e9, p.iops(), p.mibPerSecond(), p.total().ios(), p.total().errors(),
                p.total().mismatches());
    }

    public static String table(String device, LoadResult r) {
        StringBuilder sb = new StringBuilder();
        sb.append(describe(device, r.spec())).append('\n');
        sb.append(String.format(Locale.ROOT, "%-6s %12s %12s %10s %10s %10s %10s%n",
                "op", "ios", "IOPS", "MiB/s", "p50 us", "p99 us", "p99.9 us"));
        LoadStats.Counters c = r.counters();
        if (c.reads() > 0) {
            row(sb, "read", c.reads(), r.readIops(), r.readMibPerSecond(), r.readLatency());
        }
        if (c.writes() > 0) {
            row(sb, "write", c.writes(), r.writeIops(), r.writeMibPerSecond(), r.writeLatency());
        }
        row(sb, "total", c.ios(), r.iops(), r.mibPerSecond(), r.latency());
        sb.append(String.format(Locale.ROOT, "time %.3f s, ended by %s, errors %d", r.seconds(), r.stoppedBy(),
                c.errors()));
        if (r.spec().verify()) {
            sb.append(", verified reads ").append(c.verified()).append(", mismatches ").append(c.mismatches());
        }
        sb.append('\n');
        for (String p : r.problems()) {
            sb.append("  ").append(p).append('\n');
        }
        return sb.toString();
    }

    private static void row(StringBuilder sb, String op, long ios, double iops, double mib,
                            LatencyHistogram.Distribution lat) {
        sb.append(String.format(Locale.ROOT, "%-6s %12d %12.0f %10.1f %10.1f %10.1f %10.1f%n", op, ios, iops, mib,
                lat.percentileNanos(0.5) / 1e3, lat.percentileNanos(0.99) / 1e3, lat.percentileNanos(0.999) / 1e3));
    }

    /** The results as one line of JSON ({@code rnbd:bench --json}, {@code LoadGenMain --json}): {@link #fields}. */
    public static String json(String device, LoadResult r) {
        return GSON.toJson(fields(device, r));
    }

    /** The results as ordered fields, each op's a nested map; rates and latencies rounded to 3 decimals. */
    public static Map<String, Object> fields(String device, LoadResult r) {
        LoadSpec s = r.spec();
        LoadStats.Counters c = r.counters();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("device", device);
        m.put("workload", s.workload());
        m.put("read_percent", s.readPercent());
        m.put("block_size", s.blockSize());
        m.put("queue_depth", s.queueDepth());
        m.put("batch", s.batch());
        m.put("verify", s.verify());
        m.put("seconds", round3(r.seconds()));
        m.put("ended_by", r.stoppedBy());
        m.put("read", op(c.reads(), r.readIops(), r.readMibPerSecond(), r.readLatency()));
        m.put("write", op(c.writes(), r.writeIops(), r.writeMibPerSecond(), r.writeLatency()));
        m.put("total", op(c.ios(), r.iops(), r.mibPerSecond(), r.latency()));
        m.put("errors", c.errors());
        m.put("verified_reads", c.verified());
        m.put("mismatches", c.mismatches());
        m.put("problems", List.copyOf(r.problems()));
        return m;
    }

    private static Map<String, Object> op(long ios, double iops, double mib, LatencyHistogram.Distribution lat) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ios", ios);
        m.put("iops", round3(iops));
        m.put("mib_per_second", round3(mib));
        m.put("p50_us", round3(lat.percentileNanos(0.5) / 1e3));
        m.put("p99_us", round3(lat.percentileNanos(0.99) / 1e3));
        m.put("p99_9_us", round3(lat.percentileNanos(0.999) / 1e3));
        m.put("mean_us", round3(lat.meanNanos() / 1e3));
        m.put("max_us", round3(lat.maxNanos() / 1e3));
        return m;
    }

    private static double round3(double v) {
        return Math.round(v * 1000) / 1000.0;
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.3f", v);
    }
}

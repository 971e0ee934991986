package io.rnbd.loadgen;

import io.rnbd.common.LatencyHistogram;
import java.util.Locale;

/** Console text of a load run: the live progress line, the results table and JSON. */
public final class LoadReport {
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

    public static String json(String device, LoadResult r) {
        LoadSpec s = r.spec();
        LoadStats.Counters c = r.counters();
        StringBuilder sb = new StringBuilder("{");
        field(sb, "device", quote(device)).append(',');
        field(sb, "workload", quote(s.workload())).append(',');
        field(sb, "read_percent", s.readPercent()).append(',');
        field(sb, "block_size", s.blockSize()).append(',');
        field(sb, "queue_depth", s.queueDepth()).append(',');
        field(sb, "batch", s.batch()).append(',');
        field(sb, "verify", s.verify()).append(',');
        field(sb, "seconds", fmt(r.seconds())).append(',');
        field(sb, "ended_by", quote(r.stoppedBy())).append(',');
        field(sb, "read", op(c.reads(), r.readIops(), r.readMibPerSecond(), r.readLatency())).append(',');
        field(sb, "write", op(c.writes(), r.writeIops(), r.writeMibPerSecond(), r.writeLatency())).append(',');
        field(sb, "total", op(c.ios(), r.iops(), r.mibPerSecond(), r.latency())).append(',');
        field(sb, "errors", c.errors()).append(',');
        field(sb, "verified_reads", c.verified()).append(',');
        field(sb, "mismatches", c.mismatches()).append(',');
        sb.append("\"problems\":[");
        for (int i = 0; i < r.problems().size(); i++) {
            sb.append(i == 0 ? "" : ",").append(quote(r.problems().get(i)));
        }
        return sb.append("]}").toString();
    }

    private static String op(long ios, double iops, double mib, LatencyHistogram.Distribution lat) {
        StringBuilder sb = new StringBuilder("{");
        field(sb, "ios", ios).append(',');
        field(sb, "iops", fmt(iops)).append(',');
        field(sb, "mib_per_second", fmt(mib)).append(',');
        field(sb, "p50_us", fmt(lat.percentileNanos(0.5) / 1e3)).append(',');
        field(sb, "p99_us", fmt(lat.percentileNanos(0.99) / 1e3)).append(',');
        field(sb, "p99_9_us", fmt(lat.percentileNanos(0.999) / 1e3)).append(',');
        field(sb, "mean_us", fmt(lat.meanNanos() / 1e3)).append(',');
        field(sb, "max_us", fmt(lat.maxNanos() / 1e3));
        return sb.append('}').toString();
    }

    private static StringBuilder field(StringBuilder sb, String name, Object value) {
        return sb.append('"').append(name).append("\":").append(value);
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.3f", v);
    }

    static String quote(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (ch < 0x20) {
                        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) ch));
                    } else {
                        sb.append(ch);
                    }
            }
        }
        return sb.append('"').toString();
    }
}

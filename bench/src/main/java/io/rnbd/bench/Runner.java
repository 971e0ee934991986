package io.rnbd.bench;

import io.rnbd.loadgen.LoadGenerator;
import io.rnbd.loadgen.LoadResult;
import io.rnbd.loadgen.LoadSpec;
import io.rnbd.rnbd.api.BlockDevice;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the rnbd load generator on a device for one point and measures what it cost: the IO
 * rate and latency from the engine, and CPU time (this JVM, plus a peer process given by pid,
 * e.g. nbdkit) from /proc, so results can be quoted as CPU per IO.
 */
final class Runner {
    private static final long CLK_TCK = 100;

    /** What one run gave. */
    record Sample(String target, Point point, int rep, double iops, double mibPerSecond, double p50Us, double p99Us,
                  double meanUs, double cpuUsPerIo, long errors) {
        String json() {
            return String.format(Locale.ROOT, "{\"target\":\"%s\",\"point\":\"%s\",\"rep\":%d,\"iops\":%.0f,"
                    + "\"mibPerSecond\":%.1f,\"p50Us\":%.1f,\"p99Us\":%.1f,\"meanUs\":%.1f,\"cpuUsPerIo\":%.2f,"
                    + "\"errors\":%d}", target, point, rep, iops, mibPerSecond, p50Us, p99Us, meanUs, cpuUsPerIo,
                    errors);
        }
    }

    private Runner() {
    }

    static Sample run(String target, BlockDevice dev, Point p, int rep, Duration d, long peerPid) throws Exception {
        LoadGenerator gen = new LoadGenerator(dev, p.spec(d, 1 + rep));
        // for a script that profiles the measured part alone (rbd-compare.sh's CPU split)
        System.err.println("MEASURING " + target + " " + p);
        long cpu0 = ownCpuNanos() + peerCpuNanos(peerPid);
        LoadResult r = gen.start(null).get(d.toMillis() + 60_000, TimeUnit.MILLISECONDS);
        long cpu = ownCpuNanos() + peerCpuNanos(peerPid) - cpu0;
        long ios = Math.max(1, r.counters().ios());
        var lat = r.latency();
        return new Sample(target, p, rep, r.iops(), r.mibPerSecond(), lat.percentileNanos(0.5) / 1e3,
                lat.percentileNanos(0.99) / 1e3, lat.meanNanos() / 1e3, cpu / 1e3 / ios, r.counters().errors());
    }

    /**
     * Warm-up, not measured: mixed 4 KiB and 128 KiB IO in rounds until a round leaves the JIT
     * quiet (under 20 ms of compilation in it), at least two rounds and at most {@code maxRounds}.
     * A fixed few seconds left C2 compiling through the first measured points (12 % of a CPU
     * during the RBD appliance's, on a machine where the CPUs are the bottleneck): the
     * appliance runs for days, so the figures should be its steady state, not its first minute.
     * Returns the rounds it took.
     */
    static int warmUp(BlockDevice dev, int maxRounds) throws Exception {
        var jit = ManagementFactory.getCompilationMXBean();
        int round = 0;
        long quietFor = 0;
        while (round < maxRounds && (round < 2 || quietFor >= 20)) {
            long t0 = jit.getTotalCompilationTime();
            run("warmup", dev, Point.parse("randrw:4k:32"), 0, Duration.ofMillis(1000), 0);
            run("warmup", dev, Point.parse("rw:128k:8"), 0, Duration.ofMillis(500), 0);
            quietFor = jit.getTotalCompilationTime() - t0;
            round++;
        }
        return round;
    }

    /** Writes the whole device once (128 KiB sequential, depth 8), so later reads find data. */
    static void prefill(BlockDevice dev) throws Exception {
        int bs = 128 * 1024;
        LoadSpec spec = LoadSpec.builder().workload("write").blockSize(bs).queueDepth(8)
                .ioCount(dev.size() / bs).build();
        new LoadGenerator(dev, spec).start(null).get(10, TimeUnit.MINUTES);
    }

    static long ownCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** utime + stime of a process from /proc (0 if none given or gone). */
    static long peerCpuNanos(long pid) {
        if (pid <= 0) {
            return 0;
        }
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * (1_000_000_000L / CLK_TCK);
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /**
     * {@code --name value} pairs from {@code args[from..]}, in order; an option not in
     * {@code known} is refused, so a typo does not silently run the defaults.
     */
    static Map<String, String> options(String[] args, int from, String... known) {
        List<String> allowed = Arrays.asList(known);
        Map<String, String> o = new LinkedHashMap<>();
        for (int i = from; i < args.length; i += 2) {
            if (!allowed.contains(args[i]) || i + 1 >= args.length) {
                throw new IllegalArgumentException("unknown option or missing value: " + args[i]
                        + " (options: " + String.join(" ", known) + ")");
            }
            o.put(args[i], args[i + 1]);
        }
        return o;
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    /** Medians over the repetitions of each (target, point), in first-seen order. */
    static List<Sample> medians(List<Sample> all) {
        Map<String, List<Sample>> by = new LinkedHashMap<>();
        for (Sample s : all) {
            by.computeIfAbsent(s.target() + "|" + s.point(), k -> new ArrayList<>()).add(s);
        }
        List<Sample> out = new ArrayList<>();
        for (List<Sample> l : by.values()) {
            out.add(new Sample(l.get(0).target(), l.get(0).point(), l.size(),
                    median(l.stream().mapToDouble(Sample::iops).toArray()),
                    median(l.stream().mapToDouble(Sample::mibPerSecond).toArray()),
                    median(l.stream().mapToDouble(Sample::p50Us).toArray()),
                    median(l.stream().mapToDouble(Sample::p99Us).toArray()),
                    median(l.stream().mapToDouble(Sample::meanUs).toArray()),
                    median(l.stream().mapToDouble(Sample::cpuUsPerIo).toArray()),
                    l.stream().mapToLong(Sample::errors).sum()));
        }
        return out;
    }

    static String table(List<Sample> medians) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%-26s %-16s %5s %10s %10s %9s %9s %9s %10s%n",
                "target", "point", "runs", "IOPS", "MiB/s", "p50 us", "p99 us", "mean us", "CPU us/IO"));
        for (Sample s : medians) {
            sb.append(String.format(Locale.ROOT, "%-26s %-16s %5d %10.0f %10.1f %9.1f %9.1f %9.1f %10.2f%s%n",
                    s.target(), s.point(), s.rep(), s.iops(), s.mibPerSecond(), s.p50Us(), s.p99Us(), s.meanUs(),
                    s.cpuUsPerIo(), s.errors() > 0 ? "  ERRORS " + s.errors() : ""));
        }
        return sb.toString();
    }
}

package io.rnbd.bench;

import io.rnbd.rdma.disni.internal.DisniDevice;
import io.rnbd.rdma.disni.internal.DisniSettings;
import io.rnbd.rdma.disni.internal.SysfsDevice;
import io.rnbd.rdma.disni.internal.SysfsScanner;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.server.internal.ServerConfig;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Issue #9: the same raw RTRS load over real verbs (the DiSNI provider on the rxe device that
 * carries $RDMA_TEST_ADDR) and over the soft provider on loopback (127.0.0.1 / 127.0.0.2), in
 * this one JVM, points interleaved (DiSNI, then soft, per point and repetition) so both
 * providers see the same machine; medians and the DiSNI / soft ratio are printed. Made for the
 * rxe guest ({@code rxe/run-rxe-tests.sh --bench}), where the absolute numbers mean little (TCG
 * emulation) and the ratio and the error count are what to read.
 * <pre>
 * java --add-exports java.base/sun.nio.ch=ALL-UNNAMED -Djava.library.path=DIR \
 *      -cp bench/target/benchmarks.jar io.rnbd.bench.RxeLoadMain [--seconds 5] [--reps 2] [--warmup 20] [--points ...]
 * </pre>
 * Both stacks use chunk.size 256 KiB (a 128 KiB IO is one RTRS IO), queue.depth 64,
 * always.invalidate on, a 64 MiB server buffer. Lines starting with {@code RESULT} are JSON.
 */
public final class RxeLoadMain {
    static final String DEFAULT_POINTS = "randread:4k:1,randwrite:4k:1,randread:4k:16,randwrite:4k:16,"
            + "read:128k:8,write:128k:8";
    private static final String DISNI = "disni (rxe)";
    private static final String SOFT = "soft (loopback)";

    private RxeLoadMain() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = Runner.options(args, 0, "--seconds", "--reps", "--points", "--warmup");
        int seconds = Integer.parseInt(o.getOrDefault("--seconds", "5"));
        int reps = Integer.parseInt(o.getOrDefault("--reps", "2"));
        int warmup = Integer.parseInt(o.getOrDefault("--warmup", "20"));
        String points = o.getOrDefault("--points", DEFAULT_POINTS);
        String addr = System.getenv("RDMA_TEST_ADDR");
        if (addr == null || addr.isBlank()) {
            throw new IllegalStateException("RDMA_TEST_ADDR not set (run it in the rxe guest: rxe/run-rxe-tests.sh --bench)");
        }
        InetAddress a = InetAddress.getByName(addr);
        SysfsDevice info = new SysfsScanner(Path.of("/sys/class/infiniband")).scan().values().stream()
                .filter(d -> d.addresses().contains(a)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no RDMA device carries " + addr));
        // emulation stretches everything ~20x: generous CM timeout and heartbeat allowance
        Duration wait = Duration.ofSeconds(120);
        int disk = 64 << 20;
        ServerConfig cfg = new ServerConfig(0, 256 * 1024, 64, true, 5000, 60);
        List<Point> list = Point.parseList(points);
        Duration d = Duration.ofSeconds(seconds);
        List<Runner.Sample> all = new ArrayList<>();
        DisniDevice disni = DisniDevice.open(info, new DisniSettings((int) wait.toMillis()));
        SoftDevice softSrv = new SoftDevice("bench-srv", InetAddress.getByName("127.0.0.1"));
        SoftDevice softClt = new SoftDevice("bench-clt", InetAddress.getByName("127.0.0.2"));
        try (DeviceStack ds = new DeviceStack("bench-disni", cfg, new RtrsBlockDevice.Ops(disk), disni, disni, wait);
             DeviceStack ss = new DeviceStack("bench-soft", cfg, new RtrsBlockDevice.Ops(disk), softSrv, softClt,
                     wait)) {
            RtrsBlockDevice[] devs = {new RtrsBlockDevice(ds.session, disk), new RtrsBlockDevice(ss.session, disk)};
            String[] names = {DISNI, SOFT};
            System.out.println("BENCH device " + info.name() + " (" + addr + "), points " + points + ", " + seconds
                    + " s x " + reps + ", warm-up " + warmup + " s per provider");
            // the JIT compiles slowly under emulation: until it is done, the first points pay for it
            for (int t = 0; t < 2; t++) {
                Runner.run(names[t], devs[t], Point.parse("randrw:4k:8"), 0, Duration.ofSeconds(warmup / 2), 0);
                Runner.run(names[t], devs[t], Point.parse("rw:128k:4"), 0, Duration.ofSeconds(warmup - warmup / 2), 0);
            }
            for (int rep = 1; rep <= reps; rep++) {
                for (Point p : list) {
                    for (int t = 0; t < 2; t++) {
                        Runner.Sample s = Runner.run(names[t], devs[t], p, rep, d, 0);
                        System.out.println("RESULT " + s.json());
                        all.add(s);
                    }
                }
            }
        } finally {
            close(disni);
            close(softClt);
            close(softSrv);
        }
        List<Runner.Sample> med = Runner.medians(all);
        System.out.println();
        System.out.print(Runner.table(med));
        System.out.println();
        System.out.print(ratioTable(med));
        System.exit(0);
    }

    private static void close(AutoCloseable dev) {
        try {
            dev.close();
        } catch (Exception e) {
            System.err.println("closing " + dev + ": " + e);
        }
    }

    /** One line per point: both providers' medians and DiSNI / soft for IOPS and mean latency. */
    static String ratioTable(List<Runner.Sample> med) {
        StringBuilder sb = new StringBuilder("| point | rxe IOPS | rxe MiB/s | rxe p50 µs | rxe mean µs | soft IOPS "
                + "| soft MiB/s | soft p50 µs | soft mean µs | IOPS rxe/soft | mean lat rxe/soft | errors |\n"
                + "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Runner.Sample r : med) {
            if (!r.target().equals(DISNI)) {
                continue;
            }
            Runner.Sample s = med.stream().filter(x -> x.target().equals(SOFT) && x.point().equals(r.point()))
                    .findFirst().orElse(null);
            if (s == null) {
                continue;
            }
            sb.append(String.format(Locale.ROOT,
                    "| %s | %.0f | %.1f | %.0f | %.0f | %.0f | %.1f | %.0f | %.0f | %.3f | %.1f | %d / %d |%n",
                    r.point(), r.iops(), r.mibPerSecond(), r.p50Us(), r.meanUs(), s.iops(), s.mibPerSecond(),
                    s.p50Us(), s.meanUs(), r.iops() / Math.max(1, s.iops()), r.meanUs() / Math.max(1e-9, s.meanUs()),
                    r.errors(), s.errors()));
        }
        return sb.toString();
    }
}

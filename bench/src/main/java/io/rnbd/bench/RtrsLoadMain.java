package io.rnbd.bench;

import io.rnbd.rtrs.server.internal.ServerConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Issue #4: raw RTRS over rdma-soft (server and client in this JVM), driven by the rnbd load
 * generator through {@link RtrsBlockDevice}: 4 KiB random reads and writes at queue depth 1, 32,
 * 128 and 128 KiB sequential reads and writes, with {@code always.invalidate} on and off, each
 * point repeated and the medians printed. Async queue depth is the generator's; JMH has no
 * good model for N requests in flight, hence a main.
 * <pre>
 * java -cp bench/target/benchmarks.jar io.rnbd.bench.RtrsLoadMain [--seconds 3] [--reps 3] [--points ...]
 * </pre>
 * The server uses chunk.size 256 KiB (max IO = chunk - 4 KiB, so a 128 KiB IO is one RTRS
 * IO) and queue.depth 512. Lines starting with {@code RESULT} are JSON, one per run.
 */
public final class RtrsLoadMain {
    static final String DEFAULT_POINTS = "randread:4k:1,randread:4k:32,randread:4k:128,"
            + "randwrite:4k:1,randwrite:4k:32,randwrite:4k:128,read:128k:8,write:128k:8";

    private RtrsLoadMain() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = Runner.options(args, 0, "--seconds", "--reps", "--points");
        int seconds = Integer.parseInt(o.getOrDefault("--seconds", "3"));
        int reps = Integer.parseInt(o.getOrDefault("--reps", "3"));
        String points = o.getOrDefault("--points", DEFAULT_POINTS);
        List<Point> list = Point.parseList(points);
        Duration d = Duration.ofSeconds(seconds);
        int disk = 256 << 20;
        List<Runner.Sample> all = new ArrayList<>();
        for (boolean invalidate : new boolean[] {true, false}) {
            String target = "rtrs always.invalidate=" + (invalidate ? "on" : "off");
            ServerConfig cfg = new ServerConfig(0, 256 * 1024, 512, invalidate, 5000, 5);
            try (SoftStack stack = new SoftStack(cfg, new RtrsBlockDevice.Ops(disk))) {
                RtrsBlockDevice dev = new RtrsBlockDevice(stack.session, disk);
                System.err.println("warm-up " + target + ": " + Runner.warmUp(dev, 12) + " rounds");
                for (int rep = 1; rep <= reps; rep++) {
                    for (Point p : list) {
                        Runner.Sample s = Runner.run(target, dev, p, rep, d, 0);
                        System.out.println("RESULT " + s.json());
                        all.add(s);
                    }
                }
            }
        }
        System.out.println();
        System.out.print(Runner.table(Runner.medians(all)));
        System.exit(0);
    }
}

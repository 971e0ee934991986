package io.rnbd.bench;

import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockRequests;
import io.rnbd.rnbd.backend.rbd.internal.RbdBackend;
import io.rnbd.rnbd.backend.rbd.internal.RbdSettings;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Issue #19, the Java side of {@code bench/rbd-compare.sh}: the rnbd load generator on
 * <ul>
 * <li>{@code backend}: an RBD image opened by the rbd backend (librbd through the JNI library),
 * no transport: what the backend adds to librbd;</li>
 * <li>{@code appliance}: a second image exported by an RNBD server over that backend and mapped by
 * the RNBD client over RTRS on two rdma-soft devices ({@link RnbdStack}, one JVM): the whole
 * appliance path but the NBD gateway.</li>
 * </ul>
 * Usage: {@code run --conf CEPH_CONF --keyring K --id ID --backend-image A --appliance-image B
 * [--points P] [--rep N] [--seconds S] [--peer-pid OSD_PID] [--only backend|appliance]}; prints RESULT lines (one per
 * point and target, interleaved) for the script's table. CPU per IO counts this JVM plus the
 * peer (the OSD), as the script's fio and rbd bench rows cannot split theirs.
 */
public final class RbdBenchMain {
    private RbdBenchMain() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new LinkedHashMap<>();
        for (int i = 1; i + 1 < args.length; i += 2) {
            o.put(args[i], args[i + 1]);
        }
        if (args.length == 0 || !args[0].equals("run") || !o.containsKey("--conf")) {
            System.err.println("usage: RbdBenchMain run --conf CEPH_CONF [--keyring K] [--id ID] --backend-image A "
                    + "--appliance-image B [--points P] [--rep N] [--seconds S] [--peer-pid PID]");
            System.exit(2);
        }
        List<Point> points = Point.parseList(o.getOrDefault("--points",
                "randread:4k:32,randwrite:4k:32,read:128k:8,write:128k:8"));
        int rep = Integer.parseInt(o.getOrDefault("--rep", "1"));
        Duration d = Duration.ofSeconds(Long.parseLong(o.getOrDefault("--seconds", "3")));
        long peer = Long.parseLong(o.getOrDefault("--peer-pid", "0"));
        RbdSettings settings = new RbdSettings("rbd", o.get("--conf"), o.getOrDefault("--id", "admin"),
                o.getOrDefault("--keyring", ""), 0, 10);
        System.out.println(Settings.line(Settings.stack(), true));
        try (RbdBackend rbd = new RbdBackend(settings);
             BlockDevice backend = BlockRequests.checked(rbd.open(Map.of("image", o.get("--backend-image")), false));
             RnbdStack appliance = new RnbdStack(rbd, Map.of("image", o.get("--appliance-image")), true)) {
            Map<String, BlockDevice> targets = new LinkedHashMap<>();
            targets.put("backend", backend);
            targets.put("appliance", appliance.device);
            // --only T: that target alone (the script's CPU split profiles one target's points)
            if (o.containsKey("--only")) {
                targets.keySet().retainAll(List.of(o.get("--only")));
            }
            // JIT and librbd warm-up, on both, not measured
            for (Map.Entry<String, BlockDevice> t : targets.entrySet()) {
                System.err.println("warm-up " + t.getKey() + ": " + Runner.warmUp(t.getValue(), 12) + " rounds");
            }
            for (Point p : points) {
                for (Map.Entry<String, BlockDevice> t : targets.entrySet()) {
                    Runner.Sample s = Runner.run(t.getKey(), t.getValue(), p, rep, d, peer);
                    System.out.println("RESULT " + s.json());
                    if (s.errors() > 0) {
                        System.err.println(t.getKey() + " " + p + ": " + s.errors() + " IO errors");
                    }
                }
            }
        }
        System.exit(0);
    }
}

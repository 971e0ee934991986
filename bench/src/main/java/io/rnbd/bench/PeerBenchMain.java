package io.rnbd.bench;

import io.rnbd.nbd.client.NbdClient;
import io.rnbd.nbd.gateway.internal.DeviceExports;
import io.rnbd.nbd.gateway.internal.NbdServer;
import io.rnbd.nbd.gateway.internal.NbdServerConfig;
import io.rnbd.rnbd.api.BlockDevice;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Issue #8, the Java side of {@code bench/compare-peers.sh}. Modes:
 * <ul>
 * <li>{@code run --nbd URI [--peer-pid PID] [--points P] [--reps N] [--seconds S]}: the rnbd load
 * generator drives, alternately for every point and repetition, (a) a mapped RNBD device
 * ({@link RnbdStack}: RNBD over RTRS over rdma-soft into the memory backend, server and client
 * in this JVM) and (b) the NBD export at URI (e.g. {@code nbdkit memory}) through the NBD client
 * of nbd-gateway (without {@code --nbd}: the RNBD device alone, e.g. for profiling). Both are
 * written once end to end first, so reads hit allocated memory. CPU per IO counts this JVM plus
 * the peer process. Prints RESULT lines and the table of medians.</li>
 * <li>{@code gateway --port P}: the same RNBD stack served over NBD by nbd-gateway's server
 * (export {@code rnbd0}) until stdin closes, for fio's nbd engine.</li>
 * <li>{@code tcp [--seconds S] [--bs 128k]}: loopback TCP bandwidth, one blocking stream.</li>
 * </ul>
 */
public final class PeerBenchMain {
    private PeerBenchMain() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new LinkedHashMap<>();
        for (int i = 1; i < args.length; i += 2) {
            o.put(args[i], args[i + 1]);
        }
        switch (args.length == 0 ? "" : args[0]) {
            case "run" -> run(o);
            case "gateway" -> gateway(o);
            case "tcp" -> tcp(o);
            default -> {
                System.err.println("usage: PeerBenchMain run --nbd URI [--peer-pid P] [--points ...] [--reps N] "
                        + "[--seconds S] | gateway --port P [--unix PATH] [--poll-usec U] | tcp [--seconds S] [--bs 128k]");
                System.exit(2);
            }
        }
        System.exit(0);
    }

    private static void run(Map<String, String> o) throws Exception {
        List<Point> points = Point.parseList(o.getOrDefault("--points", RtrsLoadMain.DEFAULT_POINTS));
        int reps = Integer.parseInt(o.getOrDefault("--reps", "3"));
        Duration d = Duration.ofSeconds(Long.parseLong(o.getOrDefault("--seconds", "3")));
        long peerPid = Long.parseLong(o.getOrDefault("--peer-pid", "0"));
        String uri = o.get("--nbd");
        String size = o.getOrDefault("--size", "1g");
        List<Runner.Sample> all = new ArrayList<>();
        boolean invalidate = !"off".equals(o.get("--always-invalidate"));
        System.out.println(Settings.line(Settings.stack(), invalidate));
        try (RnbdStack rnbd = new RnbdStack(size, invalidate);
             NbdClient nbd = uri == null ? null : NbdClient.connect(uri)) {
            Map<String, BlockDevice> targets = new LinkedHashMap<>();
            targets.put("rnbd", rnbd.device);
            if (nbd != null) {
                targets.put("nbdkit", nbd);
            }
            for (Map.Entry<String, BlockDevice> t : targets.entrySet()) {
                long pid = t.getValue() == nbd ? peerPid : 0;
                Runner.prefill(t.getValue());
                System.err.println("warm-up " + t.getKey() + ": " + Runner.warmUp(t.getValue(), 12) + " rounds");
            }
            for (int rep = 1; rep <= reps; rep++) {
                for (Point p : points) {
                    for (Map.Entry<String, BlockDevice> t : targets.entrySet()) {
                        long pid = t.getValue() == nbd ? peerPid : 0;
                        Runner.Sample s = Runner.run(t.getKey(), t.getValue(), p, rep, d, pid);
                        System.out.println("RESULT " + s.json());
                        System.out.flush();
                        all.add(s);
                    }
                }
            }
        }
        System.out.println();
        System.out.print(Runner.table(Runner.medians(all)));
    }

    private static void gateway(Map<String, String> o) throws Exception {
        int port = Integer.parseInt(o.getOrDefault("--port", "10809"));
        boolean invalidate = !"off".equals(o.get("--always-invalidate"));
        // --poll-usec: the gateway's poll.usec (its readers busy-poll for the next request); default: the gateway's
        int pollUsec = Integer.parseInt(o.getOrDefault("--poll-usec", String.valueOf(NbdServerConfig.DEFAULT_POLL_USEC)));
        List<String> settings = Settings.gateway(pollUsec);
        if (o.containsKey("--unix")) {
            settings.add("gateway unix.socket set"); // the default profile listens on TCP only
        }
        System.out.println(Settings.line(settings, invalidate));
        try (RnbdStack rnbd = new RnbdStack(o.getOrDefault("--size", "1g"), invalidate)) {
            DeviceExports exports = new DeviceExports();
            exports.add("rnbd0", rnbd.device);
            String unix = o.get("--unix");
            // --unix: also serve on a Unix socket, as a local tool would reach the gateway.
            try (NbdServer srv = new NbdServer(NbdServerConfig.of(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), port),
                    unix == null ? null : java.nio.file.Path.of(unix)).withPollUsec(pollUsec), exports)) {
                System.out.println("READY " + srv.tcpAddress().getPort());
                System.out.flush();
                // until the script closes our stdin; each line it sends asks for the counters
                java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in,
                        java.nio.charset.StandardCharsets.UTF_8));
                while (in.readLine() != null) {
                    System.out.println("STATS " + srv.stats().snapshot());
                    System.out.flush();
                }
            }
        }
    }

    private static void tcp(Map<String, String> o) throws Exception {
        int seconds = Integer.parseInt(o.getOrDefault("--seconds", "3"));
        int bs = Integer.parseInt(o.getOrDefault("--bs", "131072"));
        int reps = Integer.parseInt(o.getOrDefault("--reps", "3"));
        double[] mib = new double[reps];
        try (ServerSocketChannel l = ServerSocketChannel.open()
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            for (int rep = 0; rep < reps; rep++) {
                mib[rep] = stream(l, bs, seconds);
                System.out.printf(Locale.ROOT, "RESULT {\"target\":\"loopback TCP stream\",\"point\":\"write:%dk:1\","
                        + "\"rep\":%d,\"mibPerSecond\":%.1f}%n", bs / 1024, rep + 1, mib[rep]);
            }
        }
        System.out.printf(Locale.ROOT, "%nloopback TCP (one blocking Java stream, %d KiB writes): median %.1f MiB/s%n",
                bs / 1024, Runner.median(mib));
    }

    /** One sender writes {@code bs}-byte buffers for {@code seconds}; the receiver counts bytes. */
    private static double stream(ServerSocketChannel l, int bs, int seconds) throws Exception {
        long[] received = new long[1];
        try (SocketChannel tx = SocketChannel.open(l.getLocalAddress()); SocketChannel rx = l.accept()) {
            tx.setOption(StandardSocketOptions.TCP_NODELAY, true);
            Thread reader = new Thread(() -> {
                ByteBuffer b = ByteBuffer.allocateDirect(bs);
                try {
                    int n;
                    while ((n = rx.read(b.clear())) >= 0) {
                        received[0] += n;
                    }
                } catch (IOException e) {
                    // closed
                }
            }, "tcp-sink");
            reader.start();
            ByteBuffer b = ByteBuffer.allocateDirect(bs);
            long t0 = System.nanoTime();
            long end = t0 + seconds * 1_000_000_000L;
            long sent = 0;
            while (System.nanoTime() < end) {
                b.clear();
                while (b.hasRemaining()) {
                    sent += tx.write(b);
                }
            }
            tx.shutdownOutput();
            reader.join(10_000);
            double secs = (System.nanoTime() - t0) / 1e9;
            return received[0] / secs / (1 << 20);
        }
    }
}

package io.rnbd.rnbd.backend.rbd.internal;

import io.rnbd.testkit.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The project's one-node Ceph cluster ({@code itests/ceph/one-node.sh}), started once per test
 * JVM for every test class that takes a {@code CephCluster} parameter (through
 * {@link Extension}) and stopped by its PIDs when the last test is done. Where a
 * prerequisite is missing (the script exits 77: no Ceph packages) the tests are skipped
 * with the script's reason; any other failure to start fails them.
 */
final class CephCluster implements ExtensionContext.Store.CloseableResource {
    private static final AtomicInteger IMAGES = new AtomicInteger();

    final Path dir;
    final Path conf;
    /** Keyring of client.rnbd, the pool-limited user the script creates. */
    final Path rnbdKeyring;
    final String skipReason;
    private final Path script;

    private CephCluster(Path script, Path dir, String skipReason) {
        this.script = script;
        this.dir = dir;
        this.conf = dir.resolve("ceph.conf");
        this.rnbdKeyring = dir.resolve("client.rnbd.keyring");
        this.skipReason = skipReason;
    }

    private static CephCluster start() {
        Path script = Path.of(required("rnbd.ceph.script"));
        Path dir = Path.of(required("rnbd.ceph.dir"));
        // under target/: ours to clear (the script wipes only directories it made itself)
        run(List.of("bash", script.toString(), "stop", dir.toString()), Map.of(), 60);
        run(List.of("rm", "-rf", dir.toString()), Map.of(), 60);
        int port = freePort();
        Result r = run(List.of("bash", script.toString(), "start", dir.toString(), Integer.toString(port)), Map.of(),
                120);
        if (r.exit == 77) {
            return new CephCluster(script, dir, r.err.strip());
        }
        if (r.exit != 0) {
            throw new IllegalStateException("the test cluster did not start (exit " + r.exit + "):\n" + r.out + r.err
                    + logTail(dir));
        }
        return new CephCluster(script, dir, null);
    }

    private static String logTail(Path dir) {
        StringBuilder s = new StringBuilder();
        for (String log : new String[] {"log/mon.out", "log/osd.out", "log/osd-mkfs.out"}) {
            try {
                List<String> lines = Files.readAllLines(dir.resolve(log));
                s.append("\n--- ").append(log).append('\n')
                        .append(String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size())));
            } catch (IOException e) {
                // not written
            }
        }
        return s.toString();
    }

    private static String required(String key) {
        String v = System.getProperty(key);
        if (v == null || v.isBlank()) {
            throw new IllegalStateException("system property " + key + " is not set: run the tests through Maven");
        }
        return v;
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A fresh image name in pool rbd. */
    static String newImage(String prefix) {
        return prefix + "-" + ProcessHandle.current().pid() + "-" + IMAGES.incrementAndGet();
    }

    /** Backend parameters for {@code image} as client.admin with this cluster's ceph.conf. */
    Map<String, String> params(String image) {
        return Map.of("conf", conf.toString(), "image", image);
    }

    RbdSettings settings() {
        return new RbdSettings("rbd", conf.toString(), "admin", "", 0, 10);
    }

    /** Runs {@code rbd ARGS} as client.admin; fails the test on a non-zero exit. */
    String rbd(String... args) {
        return cli("rbd", args);
    }

    /** Runs {@code ceph ARGS} as client.admin; fails the test on a non-zero exit. */
    String ceph(String... args) {
        return cli("ceph", args);
    }

    private String cli(String tool, String... args) {
        List<String> cmd = new ArrayList<>(List.of(tool));
        cmd.addAll(List.of(args));
        Result r = run(cmd, Map.of("CEPH_CONF", conf.toString()), 60);
        if (r.exit != 0) {
            throw new AssertionError(String.join(" ", cmd) + " exited " + r.exit + ": " + r.err.strip());
        }
        return r.out;
    }

    /**
     * SIGSTOP the OSD: the cluster stops answering, its (memstore) data kept. Returns once
     * every thread of the OSD shows as stopped: kill returns before a group stop is complete.
     */
    void pauseOsd() {
        control("osd-pause");
        // the kernel stops the OSD's threads one by one; no event to wait on
        Await.until(() -> "the OSD stopped: " + osdState(), this::osdStopped, Duration.ofSeconds(10));
    }

    private boolean osdStopped() {
        try {
            String pid = Files.readString(dir.resolve("pid.osd")).strip();
            try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
                for (Path t : (Iterable<Path>) tasks::iterator) {
                    String stat = Files.readString(t.resolve("stat"));
                    char state = stat.charAt(stat.lastIndexOf(')') + 2);
                    if (state != 'T' && state != 't') {
                        return false;
                    }
                }
            }
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The OSD's state letter from /proc (T: stopped), for failure messages. */
    String osdState() {
        try {
            String pid = Files.readString(dir.resolve("pid.osd")).strip();
            return Files.readAllLines(Path.of("/proc/" + pid + "/status")).stream()
                    .filter(l -> l.startsWith("State:")).findFirst().orElse("?");
        } catch (IOException e) {
            return "? (" + e.getMessage() + ")";
        }
    }

    void resumeOsd() {
        control("osd-resume");
    }

    private void control(String what) {
        Result r = run(List.of("bash", script.toString(), what, dir.toString()), Map.of(), 30);
        if (r.exit != 0) {
            throw new AssertionError("one-node.sh " + what + " exited " + r.exit + ": " + r.err);
        }
    }

    @Override
    public void close() {
        if (skipReason == null) {
            run(List.of("bash", script.toString(), "stop", dir.toString()), Map.of(), 60);
        }
    }

    private record Result(int exit, String out, String err) {
    }

    private static Result run(List<String> cmd, Map<String, String> env, int timeoutSec) {
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd);
            pb.environment().putAll(env);
            Path out = Files.createTempFile("ceph-cmd", ".out");
            Path err = Files.createTempFile("ceph-cmd", ".err");
            try {
                Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
                if (!p.waitFor(timeoutSec, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    throw new AssertionError(String.join(" ", cmd) + " did not finish within " + timeoutSec + " s");
                }
                return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                        Files.readString(err, StandardCharsets.UTF_8));
            } finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted running " + cmd, e);
        }
    }

    /**
     * Skips every test, with the reason, where the cluster or the library cannot be had (each
     * test on its own: a class-level abort is reported by surefire as no test at all, and an
     * assumption inside parameter resolution as an error), and hands the shared cluster to
     * parameters of type {@code CephCluster} ({@code @BeforeAll} methods must not use it then).
     */
    static final class Extension implements BeforeEachCallback, ParameterResolver {
        private static CephCluster cluster(ExtensionContext c) {
            return c.getRoot().getStore(ExtensionContext.Namespace.GLOBAL)
                    .getOrComputeIfAbsent(CephCluster.class, k -> start(), CephCluster.class);
        }

        @Override
        public void beforeEach(ExtensionContext c) {
            CephCluster ceph = cluster(c);
            Assumptions.assumeTrue(ceph.skipReason == null, () -> "no Ceph cluster: " + ceph.skipReason);
            Assumptions.assumeTrue(RbdNative.unavailable() == null, () -> "rbd backend dormant: "
                    + RbdNative.unavailable());
        }

        @Override
        public boolean supportsParameter(ParameterContext p, ExtensionContext c) {
            return p.getParameter().getType() == CephCluster.class;
        }

        @Override
        public Object resolveParameter(ParameterContext p, ExtensionContext c) {
            return cluster(c);
        }
    }
}

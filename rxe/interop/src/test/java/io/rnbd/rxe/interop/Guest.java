package io.rnbd.rxe.interop;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rnbd.testkit.Await;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The rxe guest as the interop tests see it: where they are (two stable soft-RoCE devices,
 * root), how long to wait (TCG emulation), and the shell, the kernel's modules and sysfs as
 * plain calls that fail with the command's output instead of returning a status to forget.
 *
 * <p>A test calls {@link #requireGuest()} first. Outside the guest that skips with the
 * reason; in the guest, where rxe/run-rxe-tests.sh sets {@code -Drnbd.rdma.require=true},
 * every missing prerequisite is a failure, never a silent skip.
 */
public final class Guest {
    /** rxe0's address (dummy0): exported in the guest by rxe/lib/guest-init.sh. */
    public static final String ADDR_ENV = "RDMA_TEST_ADDR";
    /** rxe1's address (dummy1): a second stable device, so that a session can have two paths. */
    public static final String ADDR2_ENV = "RDMA_TEST_ADDR2";
    /** rxe3's address (dummy3): a device whose link a test may take down for good. */
    public static final String LINKDOWN_ADDR_ENV = "RDMA_LINKDOWN_ADDR";
    /** rxe4's (dummy4): the same for the other direction's link-down test. */
    public static final String LINKDOWN_ADDR2_ENV = "RDMA_LINKDOWN_ADDR2";
    /** A single command's default limit on the host; stretched by {@link #timeout}. */
    public static final Duration COMMAND = Duration.ofSeconds(15);

    private static final long T0 = System.nanoTime();

    private Guest() {
    }

    /** A step of a test on stdout (junit.log), with seconds since the guest JVM loaded this class: where the time goes. */
    public static void step(String what) {
        System.out.printf("[interop +%.1fs] %s%n", (System.nanoTime() - T0) / 1e9, what);
    }

    /** In the guest ({@code -Drnbd.rdma.require=true}) a missing prerequisite fails; elsewhere it skips. */
    public static boolean required() {
        return Boolean.getBoolean("rnbd.rdma.require");
    }

    public static void require(boolean condition, String reason) {
        if (required()) {
            assertTrue(condition, reason);
        } else {
            assumeTrue(condition, reason);
        }
    }

    /** Both rxe addresses set, running as root, soft-RoCE devices present: or skip/fail with the reason. */
    public static void requireGuest() {
        require(isSet(ADDR_ENV) && isSet(ADDR2_ENV), "not in the rxe guest: $" + ADDR_ENV + "/$" + ADDR2_ENV
                + " unset (rxe/run-rxe-tests.sh runs the interop tests there, as root)");
        require("root".equals(System.getProperty("user.name")), "the interop tests load modules and write sysfs: root only");
        require(Files.isDirectory(Path.of("/sys/class/infiniband")), "no /sys/class/infiniband: rdma_rxe not loaded");
    }

    private static boolean isSet(String env) {
        String v = System.getenv(env);
        return v != null && !v.isBlank();
    }

    /** rxe0's IPv4 address ($RDMA_TEST_ADDR). */
    public static String addr() {
        return env(ADDR_ENV);
    }

    /** rxe1's IPv4 address ($RDMA_TEST_ADDR2): the second path's. */
    public static String addr2() {
        return env(ADDR2_ENV);
    }

    /**
     * rxe3's IPv4 address ($RDMA_LINKDOWN_ADDR): the device a test takes down and leaves so, as
     * a failed port is left until someone replaces it. Not rxe1: 6.1's rxe hangs in {@code rdma
     * link delete} of a device whose netdev went down, so rxe1 could not be made anew for the
     * classes after such a test (CI run 39).
     */
    public static String linkDownAddr() {
        return env(LINKDOWN_ADDR_ENV);
    }

    /**
     * rxe4's IPv4 address ($RDMA_LINKDOWN_ADDR2): as {@link #linkDownAddr()}, for the test whose
     * link-down is the appliance's client's (ApplianceFailuresOnLinuxTest), so that neither test
     * depends on running before the other.
     */
    public static String linkDownAddr2() {
        return env(LINKDOWN_ADDR2_ENV);
    }

    private static String env(String name) {
        String v = System.getenv(name);
        require(v != null && !v.isBlank(), "$" + name + " unset: not in the rxe guest");
        return v.trim();
    }

    /** A host-sized wait stretched by -Drnbd.rdma.timeout.factor (20 under TCG). */
    public static Duration timeout(Duration host) {
        return host.multipliedBy(Math.max(1, Integer.getInteger("rnbd.rdma.timeout.factor", 1)));
    }

    // --- commands ----------------------------------------------------------------------------

    /** What a command did: its exit status and its stdout and stderr together, in order. */
    public record Result(List<String> command, int exit, String output) {
        public boolean ok() {
            return exit == 0;
        }

        @Override
        public String toString() {
            return String.join(" ", command) + " -> exit " + exit + (output.isEmpty() ? "" : ":\n" + output);
        }
    }

    /** Runs a command, waits at most {@code limit} (killed then, and that fails the test). */
    public static Result run(Duration limit, String... command) {
        List<String> cmd = List.of(command);
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        } catch (IOException e) {
            throw new AssertionError("cannot start " + String.join(" ", cmd) + ": " + e.getMessage(), e);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Thread reader = new Thread(() -> copy(p.getInputStream(), out), "out:" + cmd.get(0));
        reader.setDaemon(true);
        reader.start();
        try {
            if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor(5, TimeUnit.SECONDS);
                reader.join(1000);
                fail(String.join(" ", cmd) + ": still running after " + limit + ", killed; output so far:\n" + text(out));
            }
            reader.join(limit.toMillis());
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while running " + String.join(" ", cmd), e);
        }
        return new Result(cmd, p.exitValue(), text(out));
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        byte[] b = new byte[8192];
        try (in) {
            for (int n; (n = in.read(b)) > 0; ) {
                synchronized (out) {
                    out.write(b, 0, n);
                }
            }
        } catch (IOException e) {
            // the process is gone; what was read is what there is
        }
    }

    private static String text(ByteArrayOutputStream out) {
        synchronized (out) {
            return out.toString(StandardCharsets.UTF_8).stripTrailing();
        }
    }

    /** Runs a command within {@code limit}; a non-zero exit fails the test with the output. Returns the output. */
    public static String check(Duration limit, String... command) {
        Result r = run(limit, command);
        if (!r.ok()) {
            fail(r.toString());
        }
        return r.output();
    }

    /** {@link #check} with {@link #COMMAND} stretched. */
    public static String check(String... command) {
        return check(timeout(COMMAND), command);
    }

    /** A bash script, checked (for pipes and redirections; prefer {@link #check} for single commands). */
    public static String sh(Duration limit, String script) {
        return check(limit, "bash", "-c", "set -o pipefail; " + script);
    }

    // --- modules -----------------------------------------------------------------------------

    /** modprobe with parameters ({@code name=value}); fails with modprobe's words and the kernel log's tail. */
    public static void modprobe(String module, String... params) {
        List<String> cmd = new ArrayList<>(List.of("modprobe", module));
        cmd.addAll(List.of(params));
        Result r = run(timeout(COMMAND), cmd.toArray(String[]::new));
        if (!r.ok()) {
            fail(r + "\nkernel log:\n" + dmesgTail(15));
        }
    }

    /** Whether a module is loaded now (/proc/modules; built-in modules are not listed there). */
    public static boolean loaded(String module) {
        String name = module.replace('-', '_') + " ";
        try {
            return Files.readAllLines(Path.of("/proc/modules")).stream().anyMatch(l -> l.startsWith(name));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Unloads each loaded module, in the order given (users first); fails if one stays. */
    public static void unload(String... modules) {
        for (String m : modules) {
            if (loaded(m)) {
                Result r = run(timeout(COMMAND), "rmmod", m);
                if (!r.ok() || loaded(m)) {
                    fail("cannot unload " + m + ": " + r + "\nkernel log:\n" + dmesgTail(15));
                }
            }
        }
    }

    /** Whether modprobe can find a module for the running kernel (installed and in modules.dep). */
    public static boolean available(String module) {
        return run(timeout(COMMAND), "modinfo", "-F", "filename", module).ok();
    }

    // --- sysfs -------------------------------------------------------------------------------

    /**
     * Writes one value to a sysfs attribute in one write(2), as {@code echo value > file} does.
     * The kernel's answer (EINVAL, EEXIST, ...) fails the test with the line written and the
     * kernel log's tail, where the module says why.
     */
    public static void writeSysfs(Path file, String value) {
        try {
            Files.write(file, (value + "\n").getBytes(StandardCharsets.US_ASCII), StandardOpenOption.WRITE);
        } catch (IOException e) {
            fail("echo '" + value + "' > " + file + ": " + e.getMessage() + "\nkernel log:\n" + dmesgTail(15), e);
        }
    }

    /**
     * The running kernel's preemption model: the one in parentheses in debugfs's
     * {@code sched/preempt} ("none voluntary (full) lazy"), which a PREEMPT_DYNAMIC kernel (all of
     * Debian's) has; debugfs is mounted for it if it is not. Without that file, from the build
     * string of {@code uname -v}: "lazy", "full" (PREEMPT, PREEMPT_RT) or "voluntary".
     */
    public static String preemptionModel() {
        Path preempt = Path.of("/sys/kernel/debug/sched/preempt");
        if (!Files.exists(preempt)) {
            run(timeout(COMMAND), "mount", "-t", "debugfs", "debugfs", "/sys/kernel/debug");
        }
        if (Files.exists(preempt)) {
            String line = readSysfs(preempt);
            int open = line.indexOf('(');
            int close = line.indexOf(')', open + 1);
            if (open >= 0 && close > open) {
                return line.substring(open + 1, close);
            }
            throw new AssertionError("cannot read the preemption model from " + preempt + ": '" + line + "'");
        }
        String build = check("uname", "-v");
        return build.contains("PREEMPT_LAZY") ? "lazy"
                : build.matches(".*\\bPREEMPT(_RT)?\\b.*") ? "full" : "voluntary";
    }

    public static String readSysfs(Path file) {
        try {
            return Files.readString(file, StandardCharsets.US_ASCII).trim();
        } catch (IOException e) {
            throw new AssertionError("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    public static String dmesgTail(int lines) {
        Result r = run(Duration.ofSeconds(30), "dmesg");
        String[] all = r.output().split("\n");
        return String.join("\n", List.of(all).subList(Math.max(0, all.length - lines), all.length));
    }

    // --- waiting -----------------------------------------------------------------------------

    /** Waits for /dev/NAME to be a block device the kernel knows (/sys/class/block/NAME). */
    public static Path waitForBlockDevice(String name, Duration limit) {
        Path dev = Path.of("/dev", name);
        Await.until("block device " + dev, () -> Files.exists(Path.of("/sys/class/block", name)) && Files.exists(dev),
                limit);
        return dev;
    }

    /** Size of a block device in bytes (/sys/class/block/NAME/size counts 512-byte sectors). */
    public static long blockDeviceSize(String name) {
        return Long.parseLong(readSysfs(Path.of("/sys/class/block", name, "size"))) * 512;
    }
}

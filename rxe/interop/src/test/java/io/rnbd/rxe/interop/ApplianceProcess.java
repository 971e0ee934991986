package io.rnbd.rxe.interop;

import io.rnbd.testkit.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@link ApplianceServerMain} in a JVM of its own, started with the guest JVM's java, classpath
 * (rxe/lib/guest-init.sh passes {@code -Drxe.classpath.file}), native library path and timeout
 * factor; its output in a log file. {@link #kill()} is SIGKILL: no close, no flush, no
 * disconnect sent by the process (the kernel tears its RDMA resources down).
 */
final class ApplianceProcess implements AutoCloseable {
    private final Process process;
    private final Path log;

    private ApplianceProcess(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    /** Starts it; its output goes to LOGNAME in the run's out directory (kept on the host), beside the classpath file. */
    static ApplianceProcess start(String logName, List<String> addresses, int port, int queueDepth, String exports) throws Exception {
        String cpFile = System.getProperty("rxe.classpath.file");
        Guest.require(cpFile != null, "-Drxe.classpath.file unset: rxe/lib/guest-init.sh passes it");
        Path log = Path.of(cpFile).resolveSibling(logName);
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
                "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "-Xmx512m",
                "-Djava.library.path=" + System.getProperty("java.library.path"),
                "-Drnbd.rdma.require=true",
                "-Drnbd.rdma.timeout.factor=" + Integer.getInteger("rnbd.rdma.timeout.factor", 1),
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=info", "-Dorg.slf4j.simpleLogger.log.com.ibm.disni=warn",
                "-cp", Files.readString(Path.of(cpFile)).trim(),
                ApplianceServerMain.class.getName(), String.join(",", addresses), Integer.toString(port),
                Integer.toString(queueDepth), exports));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        ApplianceProcess ap = new ApplianceProcess(p, log);
        Await.until("the appliance process listening (log " + log + ")",
                () -> !p.isAlive() || ap.outputSoFar().contains("LISTENING"), Guest.timeout(Duration.ofSeconds(20)));
        if (!p.isAlive()) {
            throw new AssertionError("the appliance process exited " + p.exitValue() + ":\n" + ap.output());
        }
        return ap;
    }

    String output() {
        try {
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The output as far as it reads now: a read racing the process's writes to the shared out
     * directory once failed with ENODATA (7.3 guest, CI step of 2026-11-29 20:36); the next look
     * reads it whole.
     */
    String outputSoFar() {
        try {
            return output();
        } catch (UncheckedIOException e) {
            return "";
        }
    }

    long pid() {
        return process.pid();
    }

    /** SIGKILL, and wait for the process to be gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(60, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(Guest.timeout(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)) {
                kill();
            }
        }
    }
}

package io.rnbd.itests.rbd;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Running the outside tools the scale-out tests drive (nbdcopy, nbdinfo, fio, rbd, the cluster script). */
final class Tools {
    private Tools() {
    }

    record Result(int exit, String output) {
    }

    static Result exec(long timeoutMs, String... cmd) throws Exception {
        return exec(timeoutMs, Map.of(), cmd);
    }

    /** Runs {@code cmd} with {@code env} added, output and errors together; kills it after the timeout. */
    static Result exec(long timeoutMs, Map<String, String> env, String... cmd) throws Exception {
        Path out = Files.createTempFile("rbd-it", ".out");
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
            pb.environment().putAll(env);
            Process p = pb.start();
            if (!p.waitFor(timeoutMs, TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError(String.join(" ", cmd) + " did not finish within " + timeoutMs + " ms: "
                        + Files.readString(out, StandardCharsets.UTF_8));
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /** Like {@link #exec} but fails the test on a non-zero exit. */
    static String run(long timeoutMs, String... cmd) throws Exception {
        Result r = exec(timeoutMs, cmd);
        if (r.exit() != 0) {
            throw new AssertionError(String.join(" ", cmd) + " exited " + r.exit() + ": " + r.output());
        }
        return r.output();
    }

    /** One look at a condition: done with a value, or not yet, with what it saw. */
    record Look<T>(boolean done, T value, Object seen) {
        static <T> Look<T> done(T value) {
            return new Look<>(true, value, null);
        }

        static <T> Look<T> notYet(Object seen) {
            return new Look<>(false, null, seen);
        }
    }

    interface Condition<T> {
        Look<T> look() throws Exception;
    }

    /**
     * Looks at {@code condition} every {@code pauseMs} until it is done or {@code timeoutMs} pass,
     * then fails with what it last saw and {@code diagnostics}. The scale-out tests wait on other
     * processes (a Karaf instance's console, nbdinfo, an RNBD client's reconnect delay), which
     * give no event to wait on.
     */
    static <T> T await(String what, long timeoutMs, long pauseMs, Condition<T> condition,
                       java.util.concurrent.Callable<String> diagnostics) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true) {
            Look<T> look = condition.look();
            if (look.done()) {
                return look.value();
            }
            if (System.nanoTime() >= deadline) {
                throw new AssertionError(what + " not within " + timeoutMs + " ms; last seen: " + look.seen()
                        + "\n" + diagnostics.call());
            }
            Thread.sleep(pauseMs);
        }
    }

    /** Starts {@code cmd} in the background, output to {@code log}. */
    static Process start(Path log, List<String> cmd) throws IOException {
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    static boolean installed(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator)) {
            if (new File(dir, tool).canExecute()) {
                return true;
            }
        }
        return false;
    }
}

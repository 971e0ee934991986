package io.rnbd.itests.instance;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.rnbd.itests.Ports;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * {@code ./appliance} driven as a user's script drives it (cron, systemd, CI: java on PATH,
 * JAVA_HOME not set, stdin at EOF), on an instance of its own ({@code RNBD_HOME}) whose ports
 * {@link #isolate()} moves off the fixed defaults, since other appliances share the machine.
 */
final class Appliance implements AutoCloseable {
    record Result(int exit, String output) {
    }

    private final Path work;
    private final Path dist;
    final Path home;
    int sshPort = 8101;
    int nbdPort = 10809;
    /** The password the console logs in with. */
    String password = "karaf";
    /** More environment for the script. */
    final Map<String, String> env = new java.util.HashMap<>();
    private Process karaf;

    Appliance(Path work, Path dist, Path home) {
        this.work = work;
        this.dist = dist;
        this.home = home;
    }

    /** The distribution archive of the build, unpacked to {@code dist}. */
    static void unpackDistribution(Path work, Path dist) throws Exception {
        Path staging = work.resolve("unpack");
        deleteTree(staging);
        Files.createDirectories(staging);
        Process tar = new ProcessBuilder("tar", "xzf", System.getProperty("rnbd.distribution"), "-C", staging.toString())
                .inheritIO().start();
        assertEquals("tar", 0, tar.waitFor());
        try (Stream<Path> top = Files.list(staging)) {
            Files.move(top.findFirst().orElseThrow(), dist);
        }
        Files.delete(staging);
    }

    ProcessBuilder command(String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("rnbd.appliance.script", "../appliance")).toAbsolutePath().toString());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        Map<String, String> env = pb.environment();
        env.remove("JAVA_HOME");
        env.put("PATH", Path.of(System.getProperty("java.home"), "bin") + ":" + env.getOrDefault("PATH", "/usr/bin:/bin"));
        env.put("RNBD_HOME", home.toAbsolutePath().toString());
        env.put("RNBD_DIST", dist.toAbsolutePath().toString());
        env.put("RNBD_NO_BUILD", "1");
        env.putAll(this.env);
        return pb;
    }

    /** {@code ./appliance args}, to its end; no Karaf script may say "JAVA_HOME not set". */
    Result run(long timeoutMs, String... args) throws Exception {
        Path out = Files.createTempFile(work, "appliance", ".out");
        Process p = command(args).redirectOutput(out.toFile()).start();
        if (!p.waitFor(timeoutMs, TimeUnit.MILLISECONDS)) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("./appliance " + String.join(" ", args) + " did not finish: " + Files.readString(out));
        }
        String output = Files.readString(out, StandardCharsets.UTF_8);
        assertFalse("./appliance " + String.join(" ", args) + ":\n" + output, output.contains("JAVA_HOME not set"));
        return new Result(p.exitValue(), output);
    }

    /** {@code ./appliance daemon} in the background, its output (the script's) in {@code out}. */
    Process startDaemon(Path out) throws IOException {
        karaf = command("daemon").redirectOutput(out.toFile()).start();
        return karaf;
    }

    /** {@code ./appliance daemon}: returns once the appliance is up, with what the script said. */
    Result start(long boundMs) throws Exception {
        Path out = work.resolve("karaf-" + System.nanoTime() + ".out");
        startDaemon(out);
        awaitConsole("rnbd:devices", "mapped", boundMs);
        String output = Files.readString(out, StandardCharsets.UTF_8);
        assertFalse(output, output.contains("JAVA_HOME not set"));
        return new Result(0, output);
    }

    void stop() throws Exception {
        Result r = run(60_000, "stop");
        assertEquals(r.output, 0, r.exit);
        assertTrue("Karaf did not stop", karaf.waitFor(60, TimeUnit.SECONDS));
        karaf = null;
    }

    @Override
    public void close() throws Exception {
        if (karaf != null && karaf.isAlive()) {
            run(60_000, "stop");
            if (!karaf.waitFor(60, TimeUnit.SECONDS)) {
                kill();
            }
        }
    }

    /** The Karaf JVM (karaf.pid) and the script's process, forcibly. */
    void kill() throws Exception {
        try {
            ProcessHandle.of(Long.parseLong(Files.readString(home.resolve("karaf.pid")).trim()))
                    .ifPresent(ProcessHandle::destroyForcibly);
        } catch (IOException | NumberFormatException e) {
            // no JVM yet
        }
        if (karaf != null) {
            karaf.descendants().forEach(ProcessHandle::destroyForcibly);
            karaf.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            karaf = null;
        }
    }

    String console(String command) throws Exception {
        Result r = client(command);
        assertEquals(command + ":\n" + r.output, 0, r.exit);
        return r.output;
    }

    private Result client(String command) throws Exception {
        return run(90_000, "client", "-a", Integer.toString(sshPort), "-u", "karaf", "-p", password,
                "-r", "30", "-d", "2", command);
    }

    void awaitConsole(String command, String expected, long boundMs) throws Exception {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(boundMs);
        String last = "";
        while (System.nanoTime() < end) {
            if (karaf != null && !karaf.isAlive()) {
                throw new AssertionError("Karaf exited: " + logTail());
            }
            Result r = client(command);
            last = r.output;
            if (r.exit == 0 && last.contains(expected)) {
                return;
            }
            Thread.sleep(1000);
        }
        throw new AssertionError("'" + command + "' never showed '" + expected + "' in " + boundMs / 1000 + " s: "
                + last + "\n" + logTail() + "\n" + threadDump());
    }

    /**
     * Where Karaf's threads stand (jcmd Thread.print of the pid in karaf.pid), for a boot that
     * never answers: the log alone shows where it stopped, not what it waits for.
     */
    String threadDump() {
        try {
            String pid = Files.readString(home.resolve("karaf.pid")).trim();
            Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
            Process p = new ProcessBuilder(jcmd.toString(), pid, "Thread.print").redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            p.waitFor(30, TimeUnit.SECONDS);
            String dump = new String(out, StandardCharsets.UTF_8);
            return "threads of Karaf (pid " + pid + "):\n" + (dump.length() > 60_000 ? dump.substring(0, 60_000) : dump);
        } catch (IOException | InterruptedException | RuntimeException e) {
            return "(no thread dump: " + e + ")";
        }
    }

    String logTail() {
        try {
            List<String> all = Files.readAllLines(home.resolve("data/log/karaf.log"));
            return String.join("\n", all.subList(Math.max(0, all.size() - 40), all.size()));
        } catch (IOException e) {
            return "(no karaf.log: " + e.getMessage() + ")";
        }
    }

    /** Sets {@code key} in the instance's {@code etc/file}, as a user edits it. */
    void edit(String file, String key, String value) throws IOException {
        Path p = home.resolve("etc").resolve(file);
        List<String> lines = new ArrayList<>(Files.readAllLines(p));
        boolean replaced = false;
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i).trim();
            if (l.startsWith(key + " ") || l.startsWith(key + "=")) {
                lines.set(i, key + " = " + value);
                replaced = true;
            }
        }
        if (!replaced) {
            lines.add(key + " = " + value);
        }
        Files.writeString(p, String.join("\n", lines) + "\n");
    }

    /** The files {@link #isolate()} edits. */
    static final List<String> ISOLATED_FILES = List.of("org.apache.karaf.shell.cfg", "io.rnbd.rtrs.server.cfg",
            "io.rnbd.rtrs.client.session-appliance.cfg", "io.rnbd.nbd.gateway.cfg", "org.ops4j.pax.web.cfg",
            "org.apache.karaf.management.cfg", "org.ops4j.pax.url.mvn.cfg");

    /** Free ports for every listener of the instance, and no Maven repository but the distribution's. */
    void isolate() throws IOException {
        sshPort = Ports.free();
        nbdPort = Ports.free();
        int rtrsPort = Ports.free();
        edit("org.apache.karaf.shell.cfg", "sshPort", Integer.toString(sshPort));
        edit("io.rnbd.rtrs.server.cfg", "port", Integer.toString(rtrsPort));
        edit("io.rnbd.rtrs.client.session-appliance.cfg", "paths",
                "127.0.0.1@127.0.0.1:" + rtrsPort + ",127.0.0.2@127.0.0.2:" + rtrsPort);
        edit("io.rnbd.nbd.gateway.cfg", "port", Integer.toString(nbdPort));
        edit("org.ops4j.pax.web.cfg", "org.osgi.service.http.port", Integer.toString(Ports.free()));
        edit("org.apache.karaf.management.cfg", "rmiRegistryPort", Integer.toString(Ports.free()));
        edit("org.apache.karaf.management.cfg", "rmiServerPort", Integer.toString(Ports.free()));
        edit("org.ops4j.pax.url.mvn.cfg", "org.ops4j.pax.url.mvn.offline", "true");
    }

    static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> all = Files.walk(p)) {
            for (Path f : (Iterable<Path>) all.sorted((a, b) -> b.compareTo(a))::iterator) {
                Files.delete(f);
            }
        }
    }
}

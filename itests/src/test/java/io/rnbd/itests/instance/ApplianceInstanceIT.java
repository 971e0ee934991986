package io.rnbd.itests.instance;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import org.junit.After;
import org.junit.Test;

/**
 * Issue 20, item 3: the user's instance (etc/ and data/) lives outside the build output, in
 * $RNBD_HOME, and survives a rebuild. Drives {@code ./appliance} as a user does: the instance is
 * created from the default profile, the appliance started, configured through a file in etc/ and
 * through the console (ConfigAdmin state in data/), stopped; then the distribution is rebuilt
 * (unpacked again from the archive, with a changed default file and a changed bundle, as a new
 * build after {@code git pull} brings) and started again: the edit and the export are still
 * there, the changed bundle runs, untouched defaults followed the new profile. Last,
 * {@code ./appliance reset} gives back the default profile. No Karaf script may say "JAVA_HOME not
 * set" (item 4): JAVA_HOME is unset here and java is found on PATH.
 */
public class ApplianceInstanceIT {
    private static final long BOOT_MS = 180_000;

    private final Path work = Path.of(System.getProperty("rnbd.itest.instance.work", "target/instance-it"));
    private final Path dist = work.resolve("dist");
    private final Path home = work.resolve("home");
    private final int sshPort = freePort();
    private Process karaf;

    @After
    public void stopKaraf() throws Exception {
        if (karaf != null && karaf.isAlive()) {
            appliance(60_000, "stop");
            if (!karaf.waitFor(60, TimeUnit.SECONDS)) {
                karaf.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    public void theInstanceSurvivesARebuildAndResetsToTheDefaultProfile() throws Exception {
        deleteTree(work);
        unpackDistribution();

        Result created = appliance(60_000, "instance");
        assertEquals(created.output, 0, created.exit);
        assertTrue(created.output, created.output.contains("new instance in " + home.toAbsolutePath()));
        assertTrue("no etc/ in the instance", Files.isRegularFile(home.resolve("etc/io.rnbd.client.map-rnbd0.cfg")));
        int rtrsPort = freePort();
        int nbdPort = freePort();
        // the user's edits: free ports (the tests share the machine), a shorter reconnect delay
        edit("org.apache.karaf.shell.cfg", "sshPort", Integer.toString(sshPort));
        edit("io.rnbd.rtrs.server.cfg", "port", Integer.toString(rtrsPort));
        edit("io.rnbd.rtrs.client.session-appliance.cfg", "paths",
                "127.0.0.1@127.0.0.1:" + rtrsPort + ",127.0.0.2@127.0.0.2:" + rtrsPort);
        edit("io.rnbd.rtrs.client.session-appliance.cfg", "reconnect.delay.sec", "1");
        edit("io.rnbd.nbd.gateway.cfg", "port", Integer.toString(nbdPort));
        edit("org.ops4j.pax.url.mvn.cfg", "org.ops4j.pax.url.mvn.offline", "true");

        start();
        String added = console("rnbd:export-add --backend memory --size 1m survivor");
        assertTrue(added, added.contains("export survivor added: online"));
        stop();
        assertTrue("ConfigAdmin keeps the export in data/ (not in etc/)",
                !Files.exists(home.resolve("etc/io.rnbd.server.export-survivor.cfg")));

        // the rebuild: a new distribution where the old one was, with a new default for a file the
        // user never edited and one they did, and one bundle whose content changed
        deleteTree(dist);
        unpackDistribution();
        append(dist.resolve("etc/io.rnbd.rdma.soft-soft1.cfg"), "# default of the new build\n");
        append(dist.resolve("etc/io.rnbd.nbd.gateway.cfg"), "# default of the new build\n");
        Path gateway;
        try (Stream<Path> jars = Files.walk(dist.resolve("system/io/rnbd/nbd-gateway"))) {
            gateway = jars.filter(p -> p.toString().endsWith(".jar")).findFirst().orElseThrow();
        }
        addManifestHeader(gateway, "X-Rnbd-Rebuilt", "yes");

        Result restarted = start();
        // Karaf updates the changed bundle as it boots, after the appliance came up on the old one
        awaitConsole("bundle:headers nbd-gateway", "X-Rnbd-Rebuilt");
        awaitConsole("rnbd:devices", "mapped");
        String exports = console("rnbd:exports");
        assertTrue("the export added through the console before the rebuild:\n" + exports,
                exports.contains("survivor"));
        String gatewayCfg = Files.readString(home.resolve("etc/io.rnbd.nbd.gateway.cfg"));
        assertTrue("the user's edit of a file whose default changed:\n" + gatewayCfg,
                gatewayCfg.contains("port = " + nbdPort));
        assertTrue("the new default beside it", Files.readString(home.resolve("etc/io.rnbd.nbd.gateway.cfg.default"))
                .contains("# default of the new build"));
        assertTrue(restarted.output, restarted.output.contains("etc/io.rnbd.nbd.gateway.cfg: kept your edit"));
        assertTrue("an untouched file follows the new default",
                Files.readString(home.resolve("etc/io.rnbd.rdma.soft-soft1.cfg")).contains("# default of the new build"));
        assertTrue(console("rnbd:export-remove survivor").contains("survivor"));
        stop();

        Result reset = appliance(60_000, "reset");
        assertEquals(reset.output, 0, reset.exit);
        assertTrue(reset.output, reset.output.contains("moved the old instance to " + home.toAbsolutePath() + "."));
        assertFalse("sshPort back to the default profile's",
                Files.readString(home.resolve("etc/org.apache.karaf.shell.cfg")).contains("sshPort = " + sshPort));
        assertFalse("no state left", Files.exists(home.resolve("data/cache")));
    }

    // ---- ./appliance

    private record Result(int exit, String output) {
    }

    /**
     * The environment a user's script has (cron, systemd, CI): java on PATH, JAVA_HOME not set,
     * stdin at EOF, which made Karaf's client end its session before a command's output came.
     */
    private ProcessBuilder applianceCommand(String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("rnbd.appliance.script", "../appliance")).toAbsolutePath().toString());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        Map<String, String> env = pb.environment();
        env.remove("JAVA_HOME");
        env.put("PATH", Path.of(System.getProperty("java.home"), "bin") + ":" + env.getOrDefault("PATH", "/usr/bin:/bin"));
        env.put("RNBD_HOME", home.toAbsolutePath().toString());
        env.put("RNBD_DIST", dist.toAbsolutePath().toString());
        env.put("RNBD_NO_BUILD", "1");
        return pb;
    }

    private Result appliance(long timeoutMs, String... args) throws Exception {
        Path out = Files.createTempFile(work, "appliance", ".out");
        Process p = applianceCommand(args).redirectOutput(out.toFile()).start();
        if (!p.waitFor(timeoutMs, TimeUnit.MILLISECONDS)) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("./appliance " + String.join(" ", args) + " did not finish: " + Files.readString(out));
        }
        String output = Files.readString(out, StandardCharsets.UTF_8);
        assertFalse("./appliance " + String.join(" ", args) + ":\n" + output, output.contains("JAVA_HOME not set"));
        return new Result(p.exitValue(), output);
    }

    /** {@code ./appliance daemon}: the JVM in the background; returns once it is up, with what the script said. */
    private Result start() throws Exception {
        Path out = work.resolve("karaf-" + System.nanoTime() + ".out");
        karaf = applianceCommand("daemon").redirectOutput(out.toFile()).start();
        awaitConsole("rnbd:devices", "mapped");
        String output = Files.readString(out, StandardCharsets.UTF_8);
        assertFalse(output, output.contains("JAVA_HOME not set"));
        return new Result(0, output);
    }

    private void stop() throws Exception {
        Result r = appliance(60_000, "stop");
        assertEquals(r.output, 0, r.exit);
        assertTrue("Karaf did not stop", karaf.waitFor(60, TimeUnit.SECONDS));
        karaf = null;
    }

    private String console(String command) throws Exception {
        Result r = appliance(90_000, "client", "-a", Integer.toString(sshPort), "-u", "karaf", "-p", "karaf",
                "-r", "30", "-d", "2", command);
        assertEquals(command + ":\n" + r.output, 0, r.exit);
        return r.output;
    }

    private void awaitConsole(String command, String expected) throws Exception {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BOOT_MS);
        String last = "";
        while (System.nanoTime() < end) {
            if (karaf != null && !karaf.isAlive()) {
                throw new AssertionError("Karaf exited: " + logTail());
            }
            Result r = appliance(90_000, "client", "-a", Integer.toString(sshPort), "-u", "karaf", "-p", "karaf",
                    "-r", "30", "-d", "2", command);
            last = r.output;
            if (r.exit == 0 && last.contains(expected)) {
                return;
            }
            Thread.sleep(1000);
        }
        throw new AssertionError("'" + command + "' never showed '" + expected + "': " + last + "\n" + logTail()
                + "\n" + threadDump());
    }

    /**
     * Where Karaf's threads stand (jcmd Thread.print of the pid in karaf.pid), for a boot that
     * never answers: the log alone shows where it stopped, not what it waits for.
     */
    private String threadDump() {
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

    private String logTail() {
        try {
            List<String> all = Files.readAllLines(home.resolve("data/log/karaf.log"));
            return String.join("\n", all.subList(Math.max(0, all.size() - 40), all.size()));
        } catch (IOException e) {
            return "(no karaf.log: " + e.getMessage() + ")";
        }
    }

    // ---- files

    private void unpackDistribution() throws Exception {
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

    /** Sets {@code key} in the instance's {@code etc/file}, as a user edits it. */
    private void edit(String file, String key, String value) throws IOException {
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

    private static void append(Path p, String text) throws IOException {
        Files.writeString(p, Files.readString(p) + text);
    }

    /** Rewrites a jar with one more manifest header: a bundle whose content changed. */
    private static void addManifestHeader(Path jar, String name, String value) throws IOException {
        Path tmp = jar.resolveSibling(jar.getFileName() + ".tmp");
        try (JarFile in = new JarFile(jar.toFile())) {
            Manifest m = new Manifest(in.getManifest());
            m.getMainAttributes().put(new Attributes.Name(name), value);
            try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(tmp), m)) {
                Enumeration<JarEntry> entries = in.entries();
                while (entries.hasMoreElements()) {
                    JarEntry e = entries.nextElement();
                    if (e.getName().equalsIgnoreCase("META-INF/MANIFEST.MF")) {
                        continue;
                    }
                    out.putNextEntry(new JarEntry(e.getName()));
                    try (InputStream data = in.getInputStream(e)) {
                        data.transferTo(out);
                    }
                    out.closeEntry();
                }
            }
        }
        Files.move(tmp, jar, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    private static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> all = Files.walk(p)) {
            for (Path f : (Iterable<Path>) all.sorted((a, b) -> b.compareTo(a))::iterator) {
                Files.delete(f);
            }
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

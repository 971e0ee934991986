package io.rnbd.itests.rbd;

import io.rnbd.itests.Ports;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.sshd.client.SshClient;
import org.apache.sshd.client.channel.ChannelExec;
import org.apache.sshd.client.channel.ClientChannelEvent;
import org.apache.sshd.client.keyverifier.AcceptAllServerKeyVerifier;
import org.apache.sshd.client.session.ClientSession;

/**
 * The built distribution as an operator runs it: unpacked into a directory of its own, its
 * etc/ edited, started with {@code bin/karaf daemon} (which execs the JVM, so the process is
 * the JVM and {@link #kill9()} is a real {@code kill -9}), driven through {@code bin/client}.
 * What Pax Exam cannot do from inside the container: kill it and start it again.
 *
 * <p>{@link #ask} is for the questions a test polls with (a server's role, many times a
 * takeover): the same SSH exec bin/client makes, from this JVM. Each bin/client is a JVM of its
 * own, 4–5 s on a loaded 2-core machine, and RbdHaIT's takeovers spent most of their time
 * starting them.
 */
final class KarafProcess implements AutoCloseable {
    final String name;
    final Path home;
    final int sshPort;
    private Process process;
    /** For {@link #ask}: started on first use, closed with this. */
    private SshClient ssh;

    private KarafProcess(String name, Path home, int sshPort) {
        this.name = name;
        this.home = home;
        this.sshPort = sshPort;
    }

    /** Unpacks {@code distribution} (the tar.gz) into {@code parent/name}, replacing what was there. */
    static KarafProcess unpack(String name, Path distribution, Path parent, int sshPort) throws Exception {
        Path home = parent.resolve(name);
        Tools.run(60_000, "rm", "-rf", home.toString());
        Path staging = parent.resolve(name + ".unpack");
        Tools.run(60_000, "rm", "-rf", staging.toString());
        Files.createDirectories(staging);
        Tools.run(120_000, "tar", "xzf", distribution.toString(), "-C", staging.toString());
        try (var top = Files.list(staging)) {
            Files.move(top.findFirst().orElseThrow(), home);
        }
        Files.delete(staging);
        KarafProcess k = new KarafProcess(name, home, sshPort);
        k.set("org.apache.karaf.shell.cfg", "sshPort", Integer.toString(sshPort));
        // JMX's ports too: with the defaults the second and third distribution logged "Port
        // already in use: 44444" at every boot, after trying twice to start the connector
        k.set("org.apache.karaf.management.cfg", "rmiRegistryPort", Integer.toString(Ports.free()));
        k.set("org.apache.karaf.management.cfg", "rmiServerPort", Integer.toString(Ports.free()));
        // and HTTP's (/metrics, the dashboard): with 8181 all but the first logged "Unable to
        // start Pax Web server: Failed to bind to /127.0.0.1:8181" at every boot
        k.set("org.ops4j.pax.web.cfg", "org.osgi.service.http.port", Integer.toString(Ports.free()));
        k.set("org.ops4j.pax.url.mvn.cfg", "org.ops4j.pax.url.mvn.offline", "true");
        return k;
    }

    /** Sets {@code key} in the properties file {@code etc/file}, replacing its line if there is one. */
    void set(String file, String key, String value) throws IOException {
        Path p = home.resolve("etc").resolve(file);
        List<String> lines = Files.exists(p) ? new ArrayList<>(Files.readAllLines(p)) : new ArrayList<>();
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
        write(file, String.join("\n", lines) + "\n");
    }

    /** Writes {@code etc/file} atomically, so that fileinstall never reads half of it. */
    void write(String file, String content) throws IOException {
        Path p = home.resolve("etc").resolve(file);
        Path tmp = home.resolve(file + ".tmp");
        Files.writeString(tmp, content, StandardCharsets.UTF_8);
        Files.move(tmp, p, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    void delete(String file) throws IOException {
        Files.deleteIfExists(home.resolve("etc").resolve(file));
    }

    /** Adds {@code feature} to what Karaf installs at boot. */
    void bootFeature(String feature) throws IOException {
        Path p = home.resolve("etc/org.apache.karaf.features.cfg");
        String cfg = Files.readString(p);
        String marker = "featuresBoot = \\\n";
        if (!cfg.contains(marker)) {
            throw new IllegalStateException("no featuresBoot list in " + p);
        }
        Files.writeString(p, cfg.replace(marker, marker + "    " + feature + ", \\\n"));
    }

    void start() throws IOException {
        if (alive()) {
            throw new IllegalStateException(name + " is running");
        }
        ProcessBuilder pb = new ProcessBuilder(home.resolve("bin/karaf").toString(), "daemon");
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        pb.redirectErrorStream(true);
        pb.redirectOutput(ProcessBuilder.Redirect.appendTo(home.resolve("console.out").toFile()));
        process = pb.start();
    }

    boolean alive() {
        return process != null && process.isAlive();
    }

    private volatile boolean stopped;

    long pid() {
        return process.pid();
    }

    /** SIGKILL the JVM, as {@code kill -9}: no shutdown hook, no bundle stop, nothing flushed. */
    void kill9() throws InterruptedException {
        if (process != null) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        stopped = false;
    }

    /** SIGSTOP the JVM: frozen with everything in flight, its sockets open (a silent death). */
    void sigstop() throws Exception {
        Tools.run(10_000, "kill", "-STOP", Long.toString(pid()));
        stopped = true;
    }

    /** SIGCONT: the frozen JVM runs on, unaware of the time that passed. */
    void sigcont() throws Exception {
        if (alive()) {
            Tools.run(10_000, "kill", "-CONT", Long.toString(pid()));
        }
        stopped = false;
    }

    /** Between {@link #sigstop()} and {@link #sigcont()}: its console would not answer. */
    boolean stopped() {
        return stopped;
    }

    /** Runs a console command through bin/client (ssh as karaf/karaf); its output. */
    String console(String command) throws Exception {
        Tools.Result r = Tools.exec(90_000, home.resolve("bin/client").toString(), "-a", Integer.toString(sshPort),
                "-u", "karaf", "-p", "karaf", "-r", "30", "-d", "2", command);
        if (r.exit() != 0) {
            throw new AssertionError(name + ": '" + command + "' exited " + r.exit() + ": " + r.output());
        }
        return r.output();
    }

    /**
     * Runs a console command as {@link #console} does (ssh as karaf/karaf, an exec channel,
     * connecting again every half second for up to 60 s while the server boots); its output. A
     * failure, or an exit status other than 0, is an AssertionError, as there, and one that gets
     * no answer says what state the server's process is in.
     *
     * <p>A session per command: Karaf closes the SSH session when an exec command ends
     * ({@code ShellCommand.run}), so a session kept for the next question was one the server
     * was closing, and a question asked right after another one raced that close (seen: a
     * quarter of back-to-back questions found it closed; in CI a server's console "did not
     * answer within 20 s" three times in a row).
     */
    synchronized String ask(String command) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        List<String> failures = new ArrayList<>();
        do {
            try (ClientSession s = session()) {
                return exec(s, command);
            } catch (IOException | IllegalStateException e) {
                // the server was killed, is booting or frozen: a new client next time, in case
                // this one's own threads are what does not answer
                failures.add(e.toString());
                stopClient();
            }
            if (System.nanoTime() >= deadline) {
                break;
            }
            // bin/client waits 2 s; a refused connection costs nothing, and every takeover of
            // RbdHaIT waits here for a restarted server's console
            Thread.sleep(500);
        } while (true);
        throw new AssertionError(name + ": '" + command + "' failed " + failures.size() + " times in 60 s: "
                + failures + "\n" + processState() + "\n" + logTail(40) + "\n" + jstack());
    }

    private ClientSession session() throws IOException {
        if (ssh == null) {
            ssh = SshClient.setUpDefaultClient();
            ssh.setServerKeyVerifier(AcceptAllServerKeyVerifier.INSTANCE);
            ssh.start();
        }
        ClientSession s = ssh.connect("karaf", "localhost", sshPort).verify(10, TimeUnit.SECONDS).getSession();
        try {
            s.addPasswordIdentity("karaf");
            s.auth().verify(20, TimeUnit.SECONDS);
        } catch (IOException | RuntimeException e) {
            s.close(true);
            throw e;
        }
        return s;
    }

    private String exec(ClientSession s, String command) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ChannelExec ch = s.createExecChannel(command + "\n")) {
            ch.setIn(new ByteArrayInputStream(new byte[0]));
            ch.setOut(out);
            ch.setErr(out);
            ch.open().verify(20, TimeUnit.SECONDS);
            Set<ClientChannelEvent> ended = ch.waitFor(EnumSet.of(ClientChannelEvent.CLOSED), TimeUnit.SECONDS.toMillis(90));
            if (!ended.contains(ClientChannelEvent.CLOSED)) {
                throw new IOException("no answer within 90 s");
            }
            Integer exit = ch.getExitStatus();
            String output = out.toString(StandardCharsets.UTF_8);
            if (exit == null) {
                // Karaf sends the command's exit status before it closes the channel: a channel
                // closed without one never ran the command, and its empty output is no answer
                throw new IOException("channel closed without an exit status (output: '" + output + "')");
            }
            if (exit != 0) {
                throw new AssertionError(name + ": '" + command + "' exited " + exit + ": " + output);
            }
            return output;
        }
    }

    private void stopClient() {
        if (ssh != null) {
            ssh.stop();
            ssh = null;
        }
    }

    /** Running, stopped or gone, with its threads and memory, as /proc tells (for failure messages). */
    String processState() {
        if (!alive()) {
            return "--- " + name + ": not running";
        }
        try {
            StringBuilder s = new StringBuilder("--- " + name + " pid " + pid() + (stopped ? " (SIGSTOP by the test)" : ""));
            for (String l : Files.readAllLines(Path.of("/proc/" + pid() + "/status"))) {
                if (l.startsWith("State:") || l.startsWith("Threads:") || l.startsWith("VmRSS:")) {
                    s.append(", ").append(l.replaceAll("\\s+", " "));
                }
            }
            s.append(", load average ").append(Files.readString(Path.of("/proc/loadavg")).strip());
            return s.toString();
        } catch (IOException e) {
            return "--- " + name + ": " + e;
        }
    }

    /** The JVM's threads (for failure messages where its console does not answer). */
    String jstack() {
        if (!alive() || stopped) {
            return "";
        }
        try {
            return "--- jstack " + name + "\n" + Tools.exec(60_000, "jstack", Long.toString(pid())).output();
        } catch (Exception e) {
            return "--- no jstack of " + name + ": " + e;
        }
    }

    /** The names of the JVM's threads as Linux shows them (15 characters at most). */
    List<String> threadNames() throws IOException {
        List<String> names = new ArrayList<>();
        try (var tasks = Files.list(Path.of("/proc/" + pid() + "/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    names.add(Files.readString(t.resolve("comm")).strip());
                } catch (IOException e) {
                    // the thread ended meanwhile
                }
            }
        }
        return names;
    }

    /** Where karaf.log ends now: {@link #logSince} reads what comes after. */
    long logMark() {
        try {
            return Files.size(home.resolve("data/log/karaf.log"));
        } catch (IOException e) {
            return 0; // not written yet (a server that boots): all of it is new
        }
    }

    /**
     * The lines karaf.log gained after {@code mark} whose logger is one of {@code loggers}, each
     * as its time and message, at most {@code max} (the last ones). A log that rolled over since
     * is read from its start.
     */
    List<String> logSince(long mark, int max, String... loggers) {
        Path log = home.resolve("data/log/karaf.log");
        List<String> out = new ArrayList<>();
        List<String> wanted = List.of(loggers);
        try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
            f.seek(mark <= f.length() ? mark : 0);
            byte[] rest = new byte[(int) (f.length() - f.getFilePointer())];
            f.readFully(rest);
            for (String line : new String(rest, StandardCharsets.UTF_8).split("\n")) {
                String[] field = line.split(" \\| ", 6);
                if (field.length == 6 && wanted.contains(field[3].trim())) {
                    out.add(field[0].substring(Math.max(0, field[0].indexOf('T') + 1)) + " " + field[5]);
                }
            }
        } catch (IOException e) {
            out.add("(no karaf.log: " + e.getMessage() + ")");
        }
        return out.subList(Math.max(0, out.size() - max), out.size());
    }

    /** The last lines of Karaf's log, for failure messages. */
    String logTail(int lines) {
        try {
            List<String> all = Files.readAllLines(home.resolve("data/log/karaf.log"));
            return "--- " + name + " karaf.log\n"
                    + String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "--- " + name + ": no karaf.log (" + e.getMessage() + ")";
        }
    }

    @Override
    public void close() throws InterruptedException {
        synchronized (this) {
            stopClient();
        }
        kill9();
    }
}

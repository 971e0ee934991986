package io.rnbd.itests.rbd;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Map;

/**
 * The project's one-node Ceph cluster ({@code itests/ceph/one-node.sh}) for a test class:
 * {@link #start} returns null with {@link #skipReason} set where the script says a
 * prerequisite is missing (exit 77), fails on any other error. Public for SwapIT, which swaps
 * the rbd backend inside the container where Ceph runs.
 */
public final class CephOneNode implements AutoCloseable {
    public static String skipReason;

    final Path dir;
    public final Path conf;
    public final Path rnbdKeyring;
    private final Path script;

    private CephOneNode(Path script, Path dir) {
        this.script = script;
        this.dir = dir;
        this.conf = dir.resolve("ceph.conf");
        this.rnbdKeyring = dir.resolve("client.rnbd.keyring");
    }

    public static CephOneNode start(Path script, Path dir) throws Exception {
        // under target/: ours to clear (the script wipes only directories it made itself)
        Tools.exec(60_000, "bash", script.toString(), "stop", dir.toString());
        Tools.exec(60_000, "rm", "-rf", dir.toString());
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Tools.Result r = Tools.exec(120_000, "bash", script.toString(), "start", dir.toString(), Integer.toString(port));
        if (r.exit() == 77) {
            skipReason = r.output().strip();
            return null;
        }
        if (r.exit() != 0) {
            throw new AssertionError("the test cluster did not start (exit " + r.exit() + "): " + r.output());
        }
        return new CephOneNode(script, dir);
    }

    /** {@code rbd ARGS} as client.admin; fails the test on a non-zero exit. */
    public String rbd(String... args) throws Exception {
        String[] cmd = new String[args.length + 1];
        cmd[0] = "rbd";
        System.arraycopy(args, 0, cmd, 1, args.length);
        Tools.Result r = Tools.exec(60_000, Map.of("CEPH_CONF", conf.toString()), cmd);
        if (r.exit() != 0) {
            throw new AssertionError(String.join(" ", cmd) + " exited " + r.exit() + ": " + r.output());
        }
        return r.output();
    }

    void pauseOsd() throws Exception {
        Tools.run(30_000, "bash", script.toString(), "osd-pause", dir.toString());
    }

    void resumeOsd() throws Exception {
        Tools.run(30_000, "bash", script.toString(), "osd-resume", dir.toString());
    }

    @Override
    public void close() throws Exception {
        Tools.exec(60_000, "bash", script.toString(), "stop", dir.toString());
    }
}

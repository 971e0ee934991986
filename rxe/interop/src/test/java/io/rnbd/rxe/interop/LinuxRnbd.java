package io.rnbd.rxe.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rnbd.testkit.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Linux's own RTRS/RNBD in the guest, through its module parameters and sysfs files exactly
 * as an administrator uses them (Documentation/ABI/testing/sysfs-class-rnbd-client,
 * sysfs-class-rtrs-client, sysfs-block-rnbd; names checked against Linux 6.1's sources where
 * they differ from the ABI text, e.g. {@code mpath_policy}). The modules are built for the
 * guest's kernel by rxe/lib/build-linux-rtrs.sh and installed under updates/linux-rtrs.
 *
 * <p>Every write goes through {@link Guest#writeSysfs}, so the kernel's refusal fails the test
 * with the line that was written and the kernel log's tail.
 */
public final class LinuxRnbd {
    /** rnbd-server's default port_nr (RTRS_PORT in rnbd-srv.c). */
    public static final int DEFAULT_PORT = 1234;
    public static final Path MAP_DEVICE = Path.of("/sys/class/rnbd-client/ctl/map_device");
    public static final Path CLIENT_DEVICES = Path.of("/sys/class/rnbd-client/ctl/devices");
    public static final Path RTRS_CLIENT = Path.of("/sys/class/rtrs-client");
    public static final Path RTRS_SERVER = Path.of("/sys/class/rtrs-server");
    /** Users before what they use: the order to unload in. */
    public static final List<String> MODULES = List.of("rnbd-client", "rnbd-server", "rtrs-client", "rtrs-server", "rtrs-core");

    private LinuxRnbd() {
    }

    // --- modules -----------------------------------------------------------------------------

    /** The five modules are installed for the running kernel, or skip/fail saying how to get them. */
    public static void requireModules() {
        for (String m : MODULES) {
            Guest.require(Guest.available(m), "Linux's " + m + " module is not installed for this kernel: "
                    + "rxe/run-rxe-tests.sh builds it (rxe/lib/build-linux-rtrs.sh) before the guest boots");
        }
    }

    /**
     * Loads rtrs-server and rnbd-server fresh with these parameters (module parameters are
     * read at load time, so a loaded server is unloaded first; its client must be gone).
     *
     * @param port             rnbd-server's {@code port_nr}
     * @param devSearchPath    rnbd-server's {@code dev_search_path} (may contain %SESSNAME%)
     * @param alwaysInvalidate rtrs-server's {@code always_invalidate}
     */
    public static void loadServer(int port, String devSearchPath, boolean alwaysInvalidate) {
        loadServer(port, devSearchPath, alwaysInvalidate, 0);
    }

    /**
     * As {@link #loadServer(int, String, boolean)}, with rtrs-server's {@code sess_queue_depth}
     * (the permits it grants each session; 0 leaves Linux's default, 512).
     */
    public static void loadServer(int port, String devSearchPath, boolean alwaysInvalidate, int sessQueueDepth) {
        Guest.unload("rnbd-server", "rtrs-server");
        List<String> params = new ArrayList<>(List.of("always_invalidate=" + (alwaysInvalidate ? "Y" : "N")));
        if (sessQueueDepth > 0) {
            params.add("sess_queue_depth=" + sessQueueDepth);
        }
        Guest.modprobe("rtrs-server", params.toArray(String[]::new));
        Guest.modprobe("rnbd-server", "port_nr=" + port, "dev_search_path=" + devSearchPath);
        assertEquals(alwaysInvalidate ? "Y" : "N", Guest.readSysfs(Path.of("/sys/module/rtrs_server/parameters/always_invalidate")));
        if (sessQueueDepth > 0) {
            assertEquals(Integer.toString(sessQueueDepth), Guest.readSysfs(Path.of("/sys/module/rtrs_server/parameters/sess_queue_depth")));
        }
        assertEquals(Integer.toString(port), Guest.readSysfs(Path.of("/sys/module/rnbd_server/parameters/port_nr")));
    }

    /**
     * Kernel log lines of Linux's rtrs-server having made two sessions of one, which two creating
     * connects of it at the same moment do (get_or_create_srv looks up and adds under two separate
     * locks; docs/interop.md, run 13): a path whose connections landed on different ones has
     * "Conn not set for N" when its INFO_REQ arrives, and is closed; a second session that gets as
     * far as sysfs is refused its device ("device_add()", "cannot create duplicate filename").
     * On 7.3 what follows can oops the kernel.
     */
    public static long serverSessionMadeTwice() {
        return java.util.Arrays.stream(Guest.check("dmesg").split("\n"))
                .filter(l -> l.contains("Conn not set for") || l.contains("device_add()")
                        || l.contains("cannot create duplicate filename '/devices/virtual/rtrs-server"))
                .count();
    }

    public static void loadClient() {
        Guest.modprobe("rnbd-client");
    }

    /** Unloads every RTRS/RNBD module that is loaded; fails if one stays (a device still mapped, a session up). */
    public static void unloadAll() {
        Guest.unload(MODULES.toArray(String[]::new));
    }

    // --- map / unmap -------------------------------------------------------------------------

    /** One {@code path=} of map_device: {@code [src,]dst} with {@code ip:} addresses. */
    public static String path(String dst) {
        return "ip:" + dst;
    }

    public static String path(String src, String dst) {
        return "ip:" + src + ",ip:" + dst;
    }

    /**
     * What is written to map_device: {@code [dest_port=N] sessname=S path=P [path=P ...]
     * device_path=D access_mode=M}. dest_port must come first: Linux's parser turns each
     * {@code path=} into an address with the port it has seen so far (rnbd_clt_parse_map_options),
     * so a dest_port after the paths is silently ignored for them.
     */
    public record MapSpec(String sessname, List<String> paths, String devicePath, String accessMode, Integer destPort) {
        public MapSpec {
            if (paths.isEmpty()) {
                throw new IllegalArgumentException("map_device needs at least one path=");
            }
            paths = List.copyOf(paths);
        }

        public static MapSpec of(String sessname, String devicePath, String... paths) {
            return new MapSpec(sessname, List.of(paths), devicePath, "rw", null);
        }

        public MapSpec accessMode(String mode) {
            return new MapSpec(sessname, paths, devicePath, mode, destPort);
        }

        public MapSpec destPort(int port) {
            return new MapSpec(sessname, paths, devicePath, accessMode, port);
        }

        public String line() {
            StringBuilder b = new StringBuilder();
            if (destPort != null) {
                b.append("dest_port=").append(destPort).append(' ');
            }
            b.append("sessname=").append(sessname);
            paths.forEach(p -> b.append(" path=").append(p));
            b.append(" device_path=").append(devicePath);
            if (accessMode != null) {
                b.append(" access_mode=").append(accessMode);
            }
            return b.toString();
        }

        /** The name of its link in /sys/class/rnbd-client/ctl/devices: device_path with '/' as '!', '@', session. */
        public String deviceId() {
            return devicePath.replace('/', '!') + "@" + sessname;
        }
    }

    /** A mapped Linux RNBD device: {@code /dev/rnbdN}. */
    public record Mapped(String name, String sessname, MapSpec spec) {
        public Path dev() {
            return Path.of("/dev", name);
        }

        /** /sys/block/rnbdN/rnbd: session, mapping_path, access_mode, state, unmap_device, remap_device, ... */
        public Path sysfs() {
            return Path.of("/sys/block", name, "rnbd");
        }

        public long size() {
            return Guest.blockDeviceSize(name);
        }
    }

    /** Writes the spec to map_device and waits for its /dev/rnbdN. */
    public static Mapped map(MapSpec spec) {
        Guest.writeSysfs(MAP_DEVICE, spec.line());
        Path link = CLIENT_DEVICES.resolve(spec.deviceId());
        Await.until("the link " + link, () -> Files.isSymbolicLink(link), Guest.timeout(Duration.ofSeconds(5)));
        String name;
        try {
            name = Files.readSymbolicLink(link).getFileName().toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Guest.waitForBlockDevice(name, Guest.timeout(Duration.ofSeconds(5)));
        assertEquals(spec.sessname(), Guest.readSysfs(Path.of("/sys/block", name, "rnbd", "session")));
        return new Mapped(name, spec.sessname(), spec);
    }

    /**
     * The mapping's state (/sys/block/rnbdN/rnbd/state): "open" while mapped and connected,
     * "closed" while its session has no connected path (IO fails at once then), "init" before
     * the first OPEN_RSP; after a reconnect rnbd-clt opens the device again (remap) and it
     * reads "open".
     */
    public static String deviceState(Mapped m) {
        return Guest.readSysfs(m.sysfs().resolve("state"));
    }

    /** Waits until the mapping reads "open" again (reconnected and re-opened). */
    public static void awaitOpen(Mapped m, Duration limit) {
        Await.until(m.dev() + " open", () -> "open".equals(deviceState(m)), limit);
    }

    /** {@code echo normal|force > /sys/block/rnbdN/rnbd/unmap_device}; waits for the device to go. */
    public static void unmap(Mapped m, boolean force) {
        Guest.writeSysfs(m.sysfs().resolve("unmap_device"), force ? "force" : "normal");
        Await.until(m.dev() + " gone",
                () -> !Files.exists(Path.of("/sys/class/block", m.name())), Guest.timeout(Duration.ofSeconds(5)));
    }

    /** Force-unmaps every rnbd device there is (what a test left mapped); waits for each to go. */
    public static void unmapAll() {
        List<String> names;
        try (Stream<Path> s = Files.list(Path.of("/sys/block"))) {
            names = s.filter(d -> Files.exists(d.resolve("rnbd/unmap_device"))).map(d -> d.getFileName().toString())
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (String name : names) {
            unmap(new Mapped(name, null, null), true);
        }
    }

    // --- sessions and paths (rtrs-client) ----------------------------------------------------

    public static Path session(String sessname) {
        return RTRS_CLIENT.resolve(sessname);
    }

    /** The session's path directories, /sys/class/rtrs-client/S/paths/&lt;src@dst&gt;. */
    public static List<Path> paths(String sessname) {
        Path dir = session(sessname).resolve("paths");
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return new ArrayList<>(s.sorted().toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The session's path whose destination is {@code dst} (an IPv4 address without {@code ip:}). */
    public static Optional<Path> pathTo(String sessname, String dst) {
        return paths(sessname).stream().filter(p -> Guest.readSysfs(p.resolve("dst_addr")).equals(path(dst))).findFirst();
    }

    /** "connected" or "disconnected" (paths/&lt;src@dst&gt;/state). */
    public static String state(Path path) {
        return Guest.readSysfs(path.resolve("state"));
    }

    /** {@code echo [src@]dst > /sys/class/rtrs-client/S/add_path}: the session's port is used. */
    public static void addPath(String sessname, String pathSpec) {
        Guest.writeSysfs(session(sessname).resolve("add_path"), pathSpec);
    }

    /** {@code echo 1 > paths/<src@dst>/remove_path}: blocks until the path is disconnected and removed. */
    public static void removePath(Path path) {
        Guest.writeSysfs(path.resolve("remove_path"), "1");
    }

    /** {@code echo 1 > paths/<src@dst>/disconnect}: blocks until the path is disconnected. */
    public static void disconnect(Path path) {
        Guest.writeSysfs(path.resolve("disconnect"), "1");
    }

    /** {@code echo 1 > paths/<src@dst>/reconnect}: blocks; returns once the path is connected again. */
    public static void reconnect(Path path) {
        Guest.writeSysfs(path.resolve("reconnect"), "1");
    }

    /** round-robin, min-inflight or min-latency ({@code mpath_policy} in 6.1; the ABI file calls it mp_policy). */
    public static void mpathPolicy(String sessname, String policy) {
        Guest.writeSysfs(session(sessname).resolve("mpath_policy"), policy);
        String now = Guest.readSysfs(session(sessname).resolve("mpath_policy"));
        assertTrue(now.startsWith(policy), "mpath_policy reads '" + now + "' after writing " + policy);
    }

    /** paths/&lt;src@dst&gt;/stats/rdma: "reads readBytes writes writeBytes inflight failovers". */
    public record RdmaStats(long reads, long readBytes, long writes, long writeBytes, long inflight, long failovers) {
        public long requests() {
            return reads + writes;
        }
    }

    public static RdmaStats stats(Path path) {
        String s = Guest.readSysfs(path.resolve("stats").resolve("rdma"));
        String[] f = s.split("\\s+");
        if (f.length < 6) {
            fail("unexpected stats/rdma of " + path + ": '" + s + "'");
        }
        return new RdmaStats(Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]),
                Long.parseLong(f[4]), Long.parseLong(f[5]));
    }
}

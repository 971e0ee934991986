package io.rnbd.rxe.interop;

import static io.rnbd.rxe.interop.LinuxRnbd.path;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.server.internal.ExportConfig;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.client.internal.ClientSession;
import io.rnbd.rxe.interop.LinuxRnbd.MapSpec;
import io.rnbd.rxe.interop.LinuxRnbd.Mapped;
import io.rnbd.testkit.Await;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Servers going away and coming back under mapped clients, and refusals as a Linux client sees
 * them.
 *
 * <p>What Linux's rnbd-client does, from its sources (6.1 to 7.x alike): a path that fails is
 * retried every RECONNECT_DELAY (30 s, plus up to 8 ms of jitter: RTRS_RECONNECT_SEED) without end (MAX_RECONNECTS
 * -1); once the session had a connection it reconnects as a new client (first_conn), so a
 * restarted server that lost every session takes it; on reconnect the device is opened again
 * (remap). While no path is connected, IO fails at once (rnbd_queue_rq: the device is not
 * MAPPED): the tests issue none then. A server whose queue depth changed is refused by the client
 * itself ("queue depth changed"), which then stops reconnecting for good until a manual
 * {@code reconnect}: so the appliance's server gives a returning session the limits it was
 * created with, also across a restart with another queue.depth.
 */
class LifecycleTest {
    @RegisterExtension
    static final LinuxModules linux = LinuxModules.eachTest().unloading("brd");

    private static final int MIB = 1 << 20;
    /** rtrs-server's sess_queue_depth after the reload under the appliance's client (Linux's default: 512). */
    private static final int LINUX_RELOAD_QUEUE_DEPTH = 64;

    @TempDir
    Path tmp;
    private Mapped mapped;

    private static void awaitPaths(String sess, String state, Duration limit) {
        Await.until("every path of " + sess + " " + state, () -> {
            List<Path> ps = LinuxRnbd.paths(sess);
            return !ps.isEmpty() && ps.stream().allMatch(p -> state.equals(LinuxRnbd.state(p)));
        }, limit);
    }

    /** rnbd-clt's RECONNECT_DELAY (30 s) and its jitter (8 s), which TCG does not stretch, plus the guest's slowness. */
    private static Duration reconnectWindow() {
        return Guest.timeout(Duration.ofSeconds(10)).plusSeconds(40);
    }

    private static void fio(Path dev, int offMib, int seed) {
        Guest.check(Guest.timeout(Duration.ofSeconds(60)), "fio", "--name=after", "--filename=" + dev,
                "--ioengine=libaio", "--direct=1", "--rw=randwrite", "--bs=128k", "--iodepth=16",
                "--offset=" + offMib + "m", "--size=8m", "--verify=crc32c", "--do_verify=1", "--verify_fatal=1",
                "--randseed=" + seed, "--output-format=terse");
    }

    @Test
    void applianceProcessKilledAndRestartedUnderAMappedLinuxClient() throws Exception {
        String sess = "interop-kill";
        int port = 1238;
        Path file = tmp.resolve("kill.img");
        try (var ch = Files.newByteChannel(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            ch.position(32L * MIB - 1).write(ByteBuffer.wrap(new byte[1]));
        }
        List<String> addrs = List.of(Guest.addr(), Guest.addr2());
        ApplianceProcess server = ApplianceProcess.start("lifecycle-server1.log", addrs, port, Appliance.QUEUE_DEPTH,
                "kill0=" + file);
        try {
            LinuxRnbd.loadClient();
            mapped = LinuxRnbd.map(MapSpec.of(sess, "kill0", path(Guest.addr()), path(Guest.addr2())).destPort(port));
            byte[] data = Disk.random(8 * MIB, 31);
            Disk.write(mapped.dev(), 0, data, tmp);
            Guest.check("sync", mapped.dev().toString());   // fsync: a FLUSH, so the file holds it however the process ends
            long errorsBefore = Disk.ioErrorLines();

            Guest.step("SIGKILL the appliance (pid " + server.pid() + ") under the mapped " + mapped.dev());
            server.kill();
            awaitPaths(sess, "disconnected", Guest.timeout(Duration.ofSeconds(30)));
            assertEquals("closed", LinuxRnbd.deviceState(mapped), "no path: Linux's device is closed (IO would fail at once)");
            assertArrayEquals(data, fileBytes(file, 0, 8 * MIB), "what was flushed is in the file after the kill");

            Guest.step("start it again on the same file and port");
            server = ApplianceProcess.start("lifecycle-server2.log", addrs, port, Appliance.QUEUE_DEPTH, "kill0=" + file);
            awaitPaths(sess, "connected", reconnectWindow());
            LinuxRnbd.awaitOpen(mapped, Guest.timeout(Duration.ofSeconds(10)));
            assertArrayEquals(data, Disk.read(mapped.dev(), 0, 8, tmp), "read back through Linux after the restart");
            fio(mapped.dev(), 8, 32);
            assertEquals(errorsBefore, Disk.ioErrorLines(), "no IO error:\n" + Guest.dmesgTail(20));
            LinuxRnbd.unmap(mapped, false);
            mapped = null;
        } finally {
            server.close();
        }
    }

    @Test
    void applianceServerRestartedInItsJvmAndWithAnotherQueueDepth() throws Exception {
        String sess = "interop-restart";
        int port = 1239;
        try (Appliance a = Appliance.onDisni(List.of(Guest.addr(), Guest.addr2()), port)) {
            a.exportMemory("re0", 32 * MIB);
            LinuxRnbd.loadClient();
            mapped = LinuxRnbd.map(MapSpec.of(sess, "re0", path(Guest.addr()), path(Guest.addr2())).destPort(port));
            byte[] data = Disk.random(4 * MIB, 41);
            Disk.write(mapped.dev(), 0, data, tmp);
            long errorsBefore = Disk.ioErrorLines();

            Guest.step("restart the appliance's RTRS and RNBD servers (bundle:restart in plain Java), same queue depth");
            a.restartServer(Appliance.QUEUE_DEPTH);
            awaitPaths(sess, "connected", reconnectWindow());
            LinuxRnbd.awaitOpen(mapped, Guest.timeout(Duration.ofSeconds(10)));
            assertArrayEquals(data, Disk.read(mapped.dev(), 0, 4, tmp), "the memory export kept its bytes");
            fio(mapped.dev(), 4, 42);
            assertEquals(errorsBefore, Disk.ioErrorLines(), "no IO error:\n" + Guest.dmesgTail(20));

            Guest.step("restart with queue depth " + Appliance.QUEUE_DEPTH / 2 + ": the returning session keeps its own");
            long log = Guest.check("dmesg").lines().count();
            a.restartServer(Appliance.QUEUE_DEPTH / 2);
            awaitPaths(sess, "connected", reconnectWindow());
            LinuxRnbd.awaitOpen(mapped, Guest.timeout(Duration.ofSeconds(10)));
            assertTrue(Guest.check("dmesg").lines().skip(log).noneMatch(l -> l.contains("queue depth changed")),
                    "Linux's client, which gives up for good on a changed queue depth, was given its old one:\n"
                            + Guest.dmesgTail(20));
            assertArrayEquals(data, Disk.read(mapped.dev(), 0, 4, tmp));
            fio(mapped.dev(), 4, 43);
            assertEquals(errorsBefore, Disk.ioErrorLines(), "no IO error:\n" + Guest.dmesgTail(20));
            LinuxRnbd.unmap(mapped, false);
            mapped = null;
        }
    }

    @Test
    void linuxServerRestartedUnderTheAppliancesClient() throws Exception {
        String sess = "interop-lrestart";
        LinuxRnbd.unloadAll();
        Guest.unload("brd");
        Guest.modprobe("brd", "rd_nr=1", "rd_size=" + 32 * 1024);
        LinuxRnbd.loadServer(LinuxRnbd.DEFAULT_PORT, "/dev", true);
        try (Appliance a = Appliance.onDisni(List.of(Guest.addr(), Guest.addr2()), 0)) {
            ClientSession s = a.connect(sess, List.of(new InetSocketAddress(Guest.addr(), LinuxRnbd.DEFAULT_PORT),
                    new InetSocketAddress(Guest.addr2(), LinuxRnbd.DEFAULT_PORT)));
            RemoteBlockDevice dev = a.map("rnbd-" + sess, s, "ram0", AccessMode.RW);
            byte[] data = Disk.random(MIB, 51);
            dev.write(0, ByteBuffer.allocateDirect(MIB / 8).put(data, 0, MIB / 8).flip(), true)
                    .get(Guest.timeout(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
            dev.flush().get(Guest.timeout(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);

            int depthBefore = s.queueDepth();
            assertTrue(depthBefore > LINUX_RELOAD_QUEUE_DEPTH, "Linux's default sess_queue_depth, above the reload's: " + depthBefore);

            Guest.step("rmmod Linux's rnbd-server and rtrs-server under the appliance's mapped device, then load them again"
                    + " with sess_queue_depth=" + LINUX_RELOAD_QUEUE_DEPTH);
            long madeTwiceBefore = LinuxRnbd.serverSessionMadeTwice();
            Guest.unload("rnbd-server", "rtrs-server");
            Await.until("the appliance saw its paths go", () -> s.pathInfo().stream().noneMatch(p -> p.state() == PathState.CONNECTED),
                    Guest.timeout(Duration.ofSeconds(20)));
            LinuxRnbd.loadServer(LinuxRnbd.DEFAULT_PORT, "/dev", true, LINUX_RELOAD_QUEUE_DEPTH);
            Await.until("the appliance's paths are back", () -> s.pathInfo().stream().allMatch(p -> p.state() == PathState.CONNECTED),
                    Guest.timeout(Duration.ofSeconds(30)));
            ByteBuffer got = ByteBuffer.allocateDirect(MIB / 8);
            Await.until("the device reopened on Linux's new server", () -> {
                try {
                    dev.read(0, got.clear()).get(Guest.timeout(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
                    return true;
                } catch (Exception e) {
                    return false;
                }
            }, Guest.timeout(Duration.ofSeconds(20)));
            byte[] b = new byte[MIB / 8];
            got.get(0, b);
            assertArrayEquals(java.util.Arrays.copyOf(data, MIB / 8), b, "the flushed block survived the server's restart");
            // Linux's client refuses a changed queue depth for good; the appliance's adopts it when
            // nothing holds the old permits (Permits.negotiated), and more requests than permits queue
            assertEquals(LINUX_RELOAD_QUEUE_DEPTH, s.queueDepth(), "the client took the reloaded server's queue depth");
            int writes = 2 * LINUX_RELOAD_QUEUE_DEPTH;
            byte[] burst = Disk.random(writes * 4096, 52);
            List<CompletableFuture<Void>> inFlight = new ArrayList<>();
            for (int i = 0; i < writes; i++) {
                inFlight.add(dev.write(MIB + i * 4096L, ByteBuffer.allocateDirect(4096).put(burst, i * 4096, 4096).flip(), false));
            }
            CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new))
                    .get(Guest.timeout(Duration.ofSeconds(20)).toMillis(), TimeUnit.MILLISECONDS);
            dev.flush().get(Guest.timeout(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
            assertArrayEquals(burst, java.util.Arrays.copyOf(Disk.read(Path.of("/dev/ram0"), 1, 1, tmp), burst.length),
                    writes + " writes at once over " + LINUX_RELOAD_QUEUE_DEPTH + " permits, as Linux's device holds them");
            // both paths came back to a server that had forgotten the session: they must not have
            // raced to create it (FirstConn), which makes two of it and frees one on 7.3
            assertEquals(madeTwiceBefore, LinuxRnbd.serverSessionMadeTwice(),
                    "Linux's server made the session twice:\n" + Guest.dmesgTail(30));
            a.rnbdClient().unmap(dev.name(), false);
        }
    }

    @Test
    void refusedOpensFailTheMapAsLinuxsOwnServerWouldAndTheClientGivesUp() throws Exception {
        int port = 1240;
        // Linux's own server, for reference: a device that does not exist is ENOENT, and the map fails
        LinuxRnbd.unloadAll();
        LinuxRnbd.loadServer(LinuxRnbd.DEFAULT_PORT, "/dev", true);
        LinuxRnbd.loadClient();
        String linuxSays = mapFails(MapSpec.of("interop-rej0", "nosuchdev", path(Guest.addr())).destPort(LinuxRnbd.DEFAULT_PORT));
        try (Appliance a = Appliance.onDisni(List.of(Guest.addr()), port)) {
            a.exportMemory("open0", 8 * MIB);
            a.export(new ExportConfig("only0", "memory", false, Set.of("someone-else"), 0,
                    Map.of("id", "only0", "size", Integer.toString(8 * MIB))));
            a.rnbdServer().openGraceMs(0);
            assertEquals(linuxSays, mapFails(MapSpec.of("interop-rej1", "nosuchdev", path(Guest.addr())).destPort(port)),
                    "an unknown device fails as on Linux's server (ENOENT)");
            assertTrue(mapFails(MapSpec.of("interop-rej2", "only0", path(Guest.addr())).destPort(port))
                    .contains("Permission denied"), "a session the export does not allow: EACCES");
            Mapped writer = LinuxRnbd.map(MapSpec.of("interop-rej3", "open0", path(Guest.addr())).destPort(port));
            try {
                assertTrue(mapFails(MapSpec.of("interop-rej4", "open0", path(Guest.addr())).destPort(port))
                        .contains("Device or resource busy"), "a second writer from another session: EBUSY");
                Disk.write(writer.dev(), 0, Disk.random(MIB, 61), tmp);   // the first writer is unharmed
            } finally {
                LinuxRnbd.unmap(writer, false);
            }
            for (String s : List.of("interop-rej1", "interop-rej2", "interop-rej4")) {
                Await.until("no session " + s + " left behind", () -> !Files.exists(LinuxRnbd.session(s)),
                        Guest.timeout(Duration.ofSeconds(10)));
            }
        }
    }

    /** Writes the spec to map_device, which must fail; returns the kernel's errno text. */
    private static String mapFails(MapSpec spec) {
        try {
            Files.write(LinuxRnbd.MAP_DEVICE, (spec.line() + "\n").getBytes(StandardCharsets.US_ASCII), StandardOpenOption.WRITE);
        } catch (IOException e) {
            return e.getMessage().replaceFirst("^.*: ", "");
        }
        throw new AssertionError("map_device accepted " + spec.line());
    }

    private static byte[] fileBytes(Path file, long off, int len) throws IOException {
        byte[] b = new byte[len];
        try (var ch = Files.newByteChannel(file)) {
            ByteBuffer buf = ByteBuffer.wrap(b);
            ch.position(off);
            while (buf.hasRemaining() && ch.read(buf) > 0) {
                continue;
            }
        }
        return b;
    }
}

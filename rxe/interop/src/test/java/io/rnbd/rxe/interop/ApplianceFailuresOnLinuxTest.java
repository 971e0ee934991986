package io.rnbd.rxe.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
import io.rnbd.rtrs.client.internal.ClientSession;
import io.rnbd.rtrs.client.internal.PathAddress;
import io.rnbd.testkit.Await;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ways a request of the appliance's RNBD client can end against Linux's rnbd-server other
 * than with success, each as Linux's server makes it end:
 * <ul>
 * <li>an IO errno: Linux's server answers a bio that failed with {@code
 *     blk_status_to_errno(bio->bi_status)} (rnbd_dev_bi_end_io); here a device-mapper table whose
 *     second half is the {@code error} target, so a read or write there is EIO;</li>
 * <li>a refused OPEN: a device that does not exist is the ENOENT of {@code blkdev_get_by_path}
 *     (6.1) or {@code bdev_file_open_by_path} (6.12, 7.x), a second session mapping a device
 *     read-write is the EPERM of {@code rnbd_srv_check_update_open_perm}, which allows readers
 *     beside the writer;</li>
 * <li>a path whose link goes down during IO on a device that answers in 20 ms: nothing is
 *     closed, but rxe refuses the path's next work at once (6.1: an error completion, 7.3: the
 *     post itself, its queue pair already in ERROR), and the requests the path held are failed
 *     over to the other path;</li>
 * <li>a path the appliance's client disconnects and reconnects, and then removes and adds again,
 *     during IO on that device: no write fails (so any the path held were failed over; the test
 *     does not count them), and the path comes back to the session Linux's server kept.</li>
 * </ul>
 * Each time the session serves on: an errno or a refusal ends one request or one map, never a
 * path.
 */
class ApplianceFailuresOnLinuxTest {
    @RegisterExtension
    static final LinuxModules linux = LinuxModules.eachTest().requiring("brd").unloading("brd");

    private static final int MIB = 1 << 20;
    private static final int DISK_MIB = 32;
    private static final String ERROR_DEV = "aerr0";

    @TempDir
    Path tmp;
    private SlowDevice slow;
    private boolean errorDev;

    @AfterEach
    void removeDevices() {
        if (errorDev) {
            Guest.run(Guest.timeout(Duration.ofSeconds(30)), "env", "DM_DISABLE_UDEV=1", "dmsetup", "remove", "--retry",
                    ERROR_DEV);
        }
        if (slow != null) {
            slow.close();
        }
    }

    private static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(Guest.timeout(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
    }

    private static int errnoOf(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> await(f));
        assertTrue(e.getCause() instanceof BlockIoException, "an errno, not " + e.getCause());
        return ((BlockIoException) e.getCause()).errno();
    }

    private static byte[] read(RemoteBlockDevice dev, long off, int len) throws Exception {
        ByteBuffer b = ByteBuffer.allocateDirect(len);
        await(dev.read(off, b));
        byte[] out = new byte[len];
        b.get(0, out);
        return out;
    }

    private static ByteBuffer direct(byte[] data) {
        return ByteBuffer.allocateDirect(data.length).put(data).flip();
    }

    private static void loadBrdAndServer() {
        LinuxRnbd.unloadAll();
        Guest.unload("brd");
        Guest.modprobe("brd", "rd_nr=1", "rd_size=" + DISK_MIB * 1024);
        LinuxRnbd.loadServer(LinuxRnbd.DEFAULT_PORT, "/dev", true);
    }

    private static InetSocketAddress linuxAt(String addr) {
        return new InetSocketAddress(addr, LinuxRnbd.DEFAULT_PORT);
    }

    @Test
    void anErrnoFromLinuxsServerReachesTheApplianceAsThatErrorAndThePathStays() throws Exception {
        loadBrdAndServer();
        long half = DISK_MIB / 2 * 2048L;
        // the first half /dev/ram0, the second half fails every bio (BLK_STS_IOERR)
        Guest.sh(Guest.timeout(Guest.COMMAND), "printf '0 " + half + " linear /dev/ram0 0\\n" + half + " " + half
                + " error\\n' | DM_DISABLE_UDEV=1 dmsetup create " + ERROR_DEV);
        errorDev = true;
        String dm = SlowDevice.kernelName(ERROR_DEV);
        try (Appliance a = Appliance.onDisni(List.of(Guest.addr()), 0)) {
            ClientSession s = a.connect("interop-aerr", List.of(linuxAt(Guest.addr())));
            RemoteBlockDevice dev = a.map("rnbd-aerr", s, dm, AccessMode.RW);
            assertEquals((long) DISK_MIB * MIB, dev.size(), "the dm device's size as Linux's OPEN_RSP says");
            RtrsClientPathInfo before = s.pathInfo().get(0);

            byte[] data = Disk.random(MIB, 71);
            await(dev.write(0, direct(data), false));
            assertArrayEquals(data, read(dev, 0, MIB), "the linear half reads back");

            long bad = (long) DISK_MIB / 2 * MIB + 4 * MIB;
            Guest.step("a read and a write on the error target's half of /dev/" + dm);
            assertEquals(Errno.EIO, errnoOf(dev.read(bad, ByteBuffer.allocateDirect(64 * 1024))),
                    "a read Linux's device failed is EIO at the appliance's client");
            assertEquals(Errno.EIO, errnoOf(dev.write(bad, direct(Disk.random(64 * 1024, 72)), false)),
                    "a write Linux's device failed is EIO at the appliance's client");

            byte[] again = Disk.random(MIB, 73);
            await(dev.write(MIB, direct(again), false));
            assertArrayEquals(again, read(dev, MIB, MIB), "IO goes on on the same session");
            assertArrayEquals(again, Disk.read(Path.of("/dev/ram0"), 1, 1, tmp), "and lands on Linux's /dev/ram0");
            RtrsClientPathInfo after = s.pathInfo().get(0);
            assertEquals(PathState.CONNECTED, after.state(), "an errno ends the request, not the path: " + after);
            assertEquals(before.stats().reconnectsOk(), after.stats().reconnectsOk(), "no reconnect: " + after);
            assertEquals(before.stats().failovers(), after.stats().failovers(),
                    "an errno is the answer, not a reason to resend on another path: " + after);
            a.rnbdClient().unmap(dev.name(), false);
        }
    }

    @Test
    void refusedOpensReachTheApplianceWithLinuxsErrnoAndTheSessionServesOn() throws Exception {
        loadBrdAndServer();
        try (Appliance a = Appliance.onDisni(List.of(Guest.addr()), 0)) {
            ClientSession writer = a.connect("interop-arw", List.of(linuxAt(Guest.addr())));
            ClientSession other = a.connect("interop-aro", List.of(linuxAt(Guest.addr())));

            BlockIoException none = assertThrows(BlockIoException.class,
                    () -> a.map("rnbd-anone", other, "nosuchdev", AccessMode.RW));
            assertEquals(Errno.ENOENT, none.errno(), "no /dev/nosuchdev on Linux's side: " + none);

            RemoteBlockDevice rw = a.map("rnbd-arw", writer, "ram0", AccessMode.RW);
            byte[] data = Disk.random(MIB, 74);
            await(rw.write(0, direct(data), false));
            BlockIoException second = assertThrows(BlockIoException.class,
                    () -> a.map("rnbd-arw2", other, "ram0", AccessMode.RW));
            assertEquals(Errno.EPERM, second.errno(), "a second writer from another session: " + second);
            // the refused devices stay known to the client (a mapping may be retried); gone by unmap
            a.rnbdClient().unmap("rnbd-anone", false);
            a.rnbdClient().unmap("rnbd-arw2", false);

            RemoteBlockDevice ro = a.map("rnbd-aro", other, "ram0", AccessMode.RO);
            assertArrayEquals(data, read(ro, 0, MIB), "a reader beside the writer, on the session refused twice");
            byte[] more = Disk.random(MIB, 75);
            await(rw.write(MIB, direct(more), false));
            assertArrayEquals(more, read(ro, MIB, MIB), "the writer unharmed, its data seen by the reader");
            for (ClientSession s : List.of(writer, other)) {
                assertTrue(s.pathInfo().stream().allMatch(p -> p.state() == PathState.CONNECTED
                        && p.stats().reconnectsOk() == 0), "refusals end maps, not paths: " + s.pathInfo());
            }
            a.rnbdClient().unmap(ro.name(), false);
            a.rnbdClient().unmap(rw.name(), false);
        }
    }

    /**
     * Sixteen lanes, each rewriting its own four 128 KiB blocks of a Linux export on a 20 ms
     * device, each write after the previous one was acknowledged, over two paths (rxe0, rxe4);
     * a third of the way in, rxe4's link goes down for good. Every write completes once and
     * successfully, every block reads back as last written, through the appliance and on Linux's
     * device, and the first path never leaves CONNECTED.
     */
    @Test
    void writesSurviveAPathsLinkGoingDownOnASlowLinuxExport() throws Exception {
        SlowDevice.require();
        LinuxRnbd.unloadAll();
        slow = SlowDevice.create("aslow0", 64, 20, tmp);
        String dm = slow.kernelName();
        LinuxRnbd.loadServer(LinuxRnbd.DEFAULT_PORT, "/dev", true);
        int lanes = 16;
        int blocksPerLane = 4;
        int rounds = 12;
        int block = 128 * 1024;
        try (Appliance a = Appliance.onDisni(List.of(Guest.addr(), Guest.linkDownAddr2()), 0)) {
            // heartbeats every 2 s, 15 missed: a silent path would be given up in 30 s (a cable
            // pulled between two machines, where nothing fails locally), an emulation stall of
            // the live one is outlasted (the rig's default of 25 s x 20 would wait 500 s); the
            // request timeout off, so no request is failed over for being slow on the live path
            ClientSession s = a.connect("interop-alink", List.of(linuxAt(Guest.addr()), linuxAt(Guest.linkDownAddr2())),
                    c -> c.withTimings(2000, 0, 0, 2000, 15).withRequestTimeout(0));
            RemoteBlockDevice dev = a.map("rnbd-alink", s, dm, AccessMode.RW);
            String first = pathOver(s, Guest.addr()).name();
            String second = pathOver(s, Guest.linkDownAddr2()).name();

            byte[][] last = new byte[lanes * blocksPerLane][];
            AtomicInteger writes = new AtomicInteger();
            List<CompletableFuture<Void>> running = new ArrayList<>();
            try (PathWatch watch = PathWatch.appliance(s, first)) {
                for (int lane = 0; lane < lanes; lane++) {
                    running.add(lane(dev, lane, blocksPerLane, block, last, writes, r -> r < rounds));
                }
                awaitWrites(writes, lanes * blocksPerLane * rounds / 3, running);
                long carried = pathOver(s, Guest.linkDownAddr2()).stats().io().writes();
                assertTrue(carried > 0, "the second path carried writes before its link went: " + s.pathInfo());
                Guest.step("take dummy4 (rxe4) down under " + lanes + " lanes of 128 KiB writes, " + carried
                        + " of them on that path so far");
                Guest.check("ip", "link", "set", "dummy4", "down");
                Await.until("the appliance's client gave the silent path up",
                        () -> pathOver(s, Guest.linkDownAddr2()).state() != PathState.CONNECTED,
                        Guest.timeout(Duration.ofSeconds(60)));
                Guest.step("path " + second + " given up: " + pathOver(s, Guest.linkDownAddr2()));
                for (CompletableFuture<Void> l : running) {
                    l.get(Guest.timeout(Duration.ofSeconds(90)).toMillis(), TimeUnit.MILLISECONDS);
                }
                assertEquals(lanes * blocksPerLane * rounds, writes.get(), "every write completed once");
                assertEquals(List.of(), watch.leftConnected(), "the first path stayed connected throughout");
            }
            verify(dev, last, block, slow.path());
            s.removePath(second);
            a.rnbdClient().unmap(dev.name(), false);
        }
    }

    /**
     * The appliance's own hands on a path under load, toward Linux's server on a device that
     * answers in 20 ms: 16 lanes of verified 128 KiB writes go on while the client disconnects
     * its second path (as Linux's {@code paths/*}{@code /disconnect}, it stays down until told to
     * {@code reconnect}, and comes back to the session Linux's server still holds) and then
     * removes it and adds it again (a new path of the same session). Every write completes once, every block reads back as last written on both sides,
     * the first path stays connected, and the path that came back carries writes again.
     */
    @Test
    void writesSurviveAPathDisconnectedAndRemovedAndAddedAgainOnASlowLinuxExport() throws Exception {
        SlowDevice.require();
        LinuxRnbd.unloadAll();
        slow = SlowDevice.create("aslow1", 64, 20, tmp);
        LinuxRnbd.loadServer(LinuxRnbd.DEFAULT_PORT, "/dev", true);
        int lanes = 16;
        int blocksPerLane = 4;
        int block = 128 * 1024;
        try (Appliance a = Appliance.onDisni(List.of(Guest.addr(), Guest.addr2()), 0)) {
            ClientSession s = a.connect("interop-apath", List.of(linuxAt(Guest.addr()), linuxAt(Guest.addr2())),
                    c -> c.withRequestTimeout(0));
            RemoteBlockDevice dev = a.map("rnbd-apath", s, slow.kernelName(), AccessMode.RW);
            String first = pathOver(s, Guest.addr()).name();
            String second = pathOver(s, Guest.addr2()).name();

            byte[][] last = new byte[lanes * blocksPerLane][];
            AtomicInteger writes = new AtomicInteger();
            AtomicBoolean stop = new AtomicBoolean();
            List<CompletableFuture<Void>> running = new ArrayList<>();
            try (PathWatch watch = PathWatch.appliance(s, first)) {
                for (int lane = 0; lane < lanes; lane++) {
                    running.add(lane(dev, lane, blocksPerLane, block, last, writes, r -> !stop.get()));
                }
                awaitWrites(writes, 4 * lanes, running);
                assertTrue(pathOver(s, Guest.addr2()).stats().io().writes() > 0, "the second path carried writes: " + s.pathInfo());

                Guest.step("disconnect " + second + " under " + lanes + " lanes of 128 KiB writes (" + writes.get() + " so far)");
                s.disconnectPath(second);
                // as Linux's paths/*/disconnect: the path stays down until told to reconnect
                assertTrue(pathOver(s, Guest.addr2()).state() != PathState.CONNECTED, "disconnected: " + s.pathInfo());
                awaitWrites(writes, writes.get() + 2 * lanes, running);   // IO goes on over one path
                assertTrue(pathOver(s, Guest.addr2()).state() != PathState.CONNECTED, "still down: " + s.pathInfo());
                s.reconnectPath(second);
                awaitCarrying(s, Guest.addr2(), running, "reconnected");

                Guest.step("remove " + second + " and add it again (" + writes.get() + " writes so far)");
                s.removePath(second);
                assertTrue(s.pathInfo().stream().noneMatch(p -> p.dstAddress().contains(Guest.addr2())), "removed: " + s.pathInfo());
                awaitWrites(writes, writes.get() + 2 * lanes, running);
                s.addPath(new PathAddress(InetAddress.getByName(Guest.addr2()), InetAddress.getByName(Guest.addr2()),
                        LinuxRnbd.DEFAULT_PORT));
                awaitCarrying(s, Guest.addr2(), running, "added again");

                stop.set(true);
                for (CompletableFuture<Void> l : running) {
                    l.get(Guest.timeout(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
                }
                assertEquals(List.of(), watch.leftConnected(), "the first path stayed connected throughout");
            }
            Guest.step(writes.get() + " writes, none failed");
            verify(dev, last, block, slow.path());
            a.rnbdClient().unmap(dev.name(), false);
        }
    }

    /** Until the lanes made {@code n} writes; a lane that failed fails the wait at once. */
    private static void awaitWrites(AtomicInteger writes, int n, List<CompletableFuture<Void>> lanes) {
        Await.until(n + " writes made", () -> {
            rethrowFailed(lanes);
            return writes.get() >= n;
        }, Guest.timeout(Duration.ofSeconds(60)));
    }

    /** Throws the first failed lane's failure: a wait for IO that a failed lane will not make ends at once. */
    private static void rethrowFailed(List<CompletableFuture<Void>> lanes) {
        lanes.stream().filter(CompletableFuture::isCompletedExceptionally).findFirst().ifPresent(CompletableFuture::join);
    }

    /** Until the path to {@code dst} is connected and has carried writes since it connected. */
    private static void awaitCarrying(ClientSession s, String dst, List<CompletableFuture<Void>> lanes, String what) {
        Await.until("the path to " + dst + " " + what, () -> pathOver(s, dst).state() == PathState.CONNECTED,
                Guest.timeout(Duration.ofSeconds(30)));
        long at = pathOver(s, dst).stats().io().writes();
        Await.until("the path to " + dst + " carries writes again", () -> {
            rethrowFailed(lanes);
            return pathOver(s, dst).stats().io().writes() > at;
        }, Guest.timeout(Duration.ofSeconds(30)));
    }

    private static RtrsClientPathInfo pathOver(ClientSession s, String dst) {
        return s.pathInfo().stream().filter(p -> p.dstAddress().contains(dst)).findFirst()
                .orElseThrow(() -> new AssertionError("no path to " + dst + ": " + s.pathInfo()));
    }

    /**
     * A lane rewrites its blocks round after round, each write after the previous one was
     * acknowledged, while {@code moreRounds} accepts the next round's number; the first failed
     * write ends it, failed.
     */
    private static CompletableFuture<Void> lane(RemoteBlockDevice dev, int lane, int blocksPerLane, int block,
                                                byte[][] last, AtomicInteger writes, IntPredicate moreRounds) {
        Random rnd = new Random(lane);
        CompletableFuture<Void> done = new CompletableFuture<>();
        new Object() {
            void write(int i) {
                if (i % blocksPerLane == 0 && !moreRounds.test(i / blocksPerLane)) {
                    done.complete(null);
                    return;
                }
                int b = lane * blocksPerLane + i % blocksPerLane;
                byte[] data = new byte[block];
                rnd.nextBytes(data);
                dev.write((long) b * block, direct(data), false).whenComplete((v, e) -> {
                    if (e != null) {
                        done.completeExceptionally(e);
                        return;
                    }
                    last[b] = data;
                    writes.incrementAndGet();
                    write(i + 1);
                });
            }
        }.write(0);
        return done;
    }

    /** Every block as last written, read through the appliance and on Linux's device. */
    private void verify(RemoteBlockDevice dev, byte[][] last, int block, Path onLinuxDev) throws Exception {
        Guest.step("read back through the appliance and on " + onLinuxDev);
        byte[] onLinux = Disk.read(onLinuxDev, 0, (int) ((long) last.length * block / MIB), tmp);
        for (int b = 0; b < last.length; b++) {
            assertArrayEquals(last[b], read(dev, (long) b * block, block), "block " + b + " through the appliance");
            byte[] there = new byte[block];
            System.arraycopy(onLinux, b * block, there, 0, block);
            assertArrayEquals(last[b], there, "block " + b + " on Linux's " + onLinuxDev);
        }
    }
}

package io.rnbd.rxe.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.client.internal.ClientSession;
import io.rnbd.testkit.Await;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The appliance's RNBD client maps Linux's rnbd-server export of a brd RAM disk (Linux's own
 * modules, dev_search_path /dev) over two paths, one per soft-RoCE device: verified IO from
 * eight lanes, each rewriting its own blocks with fresh data, while Linux's server kills one
 * path through its sysfs (rtrs-server .../paths/&lt;path&gt;/disconnect); every write completes
 * once and successfully, every block reads back as last written through the appliance and on
 * the server's /dev/ram0, and the killed path reconnects. With Linux's always_invalidate on
 * (answers carry RKEY_RSPs) and off (one descriptor for all chunks, empty answers).
 */
class ApplianceMapsLinuxExportTest {
    @RegisterExtension
    static final LinuxModules linux = LinuxModules.eachTest().requiring("brd").unloading("brd");

    private static final int DISK_MIB = 32;
    private static final int LANES = 8;
    private static final int BLOCKS_PER_LANE = 4;
    private static final int ROUNDS = 24;

    @TempDir
    Path tmp;

    @Test
    void applianceMapsALinuxExportWithAlwaysInvalidate() throws Exception {
        scenario("interop-aa", true);
    }

    @Test
    void applianceMapsALinuxExportWithoutAlwaysInvalidate() throws Exception {
        scenario("interop-ab", false);
    }

    private void scenario(String sess, boolean alwaysInvalidate) throws Exception {
        LinuxRnbd.unloadAll();
        Guest.unload("brd");
        Guest.step("appliance->linux (always_invalidate " + alwaysInvalidate + "): brd, rtrs-server, rnbd-server");
        Guest.modprobe("brd", "rd_nr=1", "rd_size=" + DISK_MIB * 1024);
        LinuxRnbd.loadServer(LinuxRnbd.DEFAULT_PORT, "/dev", alwaysInvalidate);
        try (Appliance a = Appliance.onDisni(List.of(Guest.addr(), Guest.addr2()), 0)) {
            ClientSession s = a.connect(sess, List.of(new InetSocketAddress(Guest.addr(), LinuxRnbd.DEFAULT_PORT),
                    new InetSocketAddress(Guest.addr2(), LinuxRnbd.DEFAULT_PORT)));
            Path onServer = LinuxRnbd.RTRS_SERVER.resolve(sess).resolve("paths");
            Await.until("Linux's server shows one session of two paths",
                    () -> list(onServer).size() == 2, Guest.timeout(Duration.ofSeconds(5)));
            RemoteBlockDevice dev = a.map("rnbd-" + sess, s, "ram0", AccessMode.RW);
            assertEquals((long) DISK_MIB << 20, dev.size(), "nsectors of /dev/ram0 as Linux's OPEN_RSP says");
            assertEquals("ram0", Guest.readSysfs(Path.of("/sys/class/rnbd-server/ctl/devices/ram0/sessions")
                    .resolve(sess).resolve("mapping_path")), "Linux's server records the OPEN's device name");

            Guest.step("verified IO from " + LANES + " lanes; Linux's server kills a path at round " + ROUNDS / 3);
            int block = 64 * 1024;
            byte[][] last = new byte[LANES * BLOCKS_PER_LANE][];
            AtomicInteger writes = new AtomicInteger();
            List<CompletableFuture<Void>> lanes = new ArrayList<>();
            CompletableFuture<Void> third = new CompletableFuture<>();
            for (int lane = 0; lane < LANES; lane++) {
                lanes.add(lane(dev, lane, block, last, writes, third));
            }
            third.get(Guest.timeout(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
            Path victim = list(onServer).get(0);
            Guest.writeSysfs(victim.resolve("disconnect"), "1");
            for (CompletableFuture<Void> l : lanes) {
                l.get(Guest.timeout(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
            }
            assertEquals(LANES * BLOCKS_PER_LANE * ROUNDS, writes.get(), "every write completed once");
            assertTrue(s.pathInfo().stream().anyMatch(p -> p.stats().reconnectsOk() > 0
                    || p.state() != PathState.CONNECTED), "the killed path was noticed: " + s.pathInfo());

            Guest.step("read back through the appliance and on /dev/ram0");
            byte[] ram = Disk.read(Path.of("/dev/ram0"), 0, DISK_MIB, tmp);
            for (int b = 0; b < last.length; b++) {
                ByteBuffer got = ByteBuffer.allocateDirect(block);
                dev.read((long) b * block, got).get(Guest.timeout(Duration.ofSeconds(10)).toMillis(),
                        TimeUnit.MILLISECONDS);
                byte[] bytes = new byte[block];
                got.get(0, bytes);
                assertArrayEquals(last[b], bytes, "block " + b + " through the appliance");
                byte[] onRam = new byte[block];
                System.arraycopy(ram, b * block, onRam, 0, block);
                assertArrayEquals(last[b], onRam, "block " + b + " on Linux's /dev/ram0");
            }
            Await.until("the killed path is back",
                    () -> s.pathInfo().stream().allMatch(p -> p.state() == PathState.CONNECTED),
                    Guest.timeout(Duration.ofSeconds(30)));
            a.rnbdClient().unmap(dev.name(), false);
        }
    }

    /** A lane rewrites its blocks round after round, each write after the previous one was acknowledged. */
    private static CompletableFuture<Void> lane(RemoteBlockDevice dev, int lane, int block, byte[][] last,
                                                AtomicInteger writes, CompletableFuture<Void> third) {
        Random rnd = new Random(lane);
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (int r = 0; r < ROUNDS; r++) {
            for (int k = 0; k < BLOCKS_PER_LANE; k++) {
                int b = lane * BLOCKS_PER_LANE + k;
                int round = r;
                chain = chain.thenCompose(v -> {
                    byte[] data = new byte[block];
                    rnd.nextBytes(data);
                    ByteBuffer src = ByteBuffer.allocateDirect(block).put(data).flip();
                    return dev.write((long) b * block, src, false).thenRun(() -> {
                        last[b] = data;
                        if (writes.incrementAndGet() >= LANES * BLOCKS_PER_LANE * ROUNDS / 3) {
                            third.complete(null);
                        }
                    });
                });
            }
        }
        return chain;
    }

    private static List<Path> list(Path dir) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().toList();
        } catch (java.io.IOException e) {
            return List.of();
        }
    }
}

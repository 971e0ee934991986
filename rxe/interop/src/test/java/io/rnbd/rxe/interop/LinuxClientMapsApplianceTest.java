package io.rnbd.rxe.interop;

import static io.rnbd.rxe.interop.LinuxRnbd.path;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rtrs.api.RtrsServerSessionInfo;
import io.rnbd.rxe.interop.LinuxRnbd.MapSpec;
import io.rnbd.rxe.interop.LinuxRnbd.Mapped;
import io.rnbd.rxe.interop.LinuxRnbd.RdmaStats;
import io.rnbd.testkit.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Linux's rnbd-client (the kernel's own module) maps an export of the appliance's RNBD server,
 * which runs on the appliance's RTRS server over the DiSNI provider on the guest's two
 * soft-RoCE devices: the map_device line a Linux host uses, two paths, verified O_DIRECT IO
 * landing in the appliance's memory export, fio with crc32c verification, an ext4 file system
 * made, filled and checked clean, a path removed and re-added through sysfs while IO runs with
 * no IO error, and unmap. With always_invalidate on (the default: every answer carries a
 * chunk's new rkey in an RKEY_RSP) and off (empty RDMA_WRITE_WITH_IMM answers).
 */
class LinuxClientMapsApplianceTest {
    @RegisterExtension
    static final LinuxModules linux = LinuxModules.eachTest();

    /** Not Linux's 1234, so that nothing else in the guest answers in the appliance's place. */
    private static final int PORT = 1235;
    private static final int DISK_MIB = 64;
    private static final int FIXED_MIB = 16;

    @TempDir
    Path tmp;
    private Mapped mapped;

    @Test
    void linuxMapsAnApplianceExportWithAlwaysInvalidate() throws Exception {
        scenario("interop-la", true, true);
    }

    @Test
    void linuxMapsAnApplianceExportWithoutAlwaysInvalidate() throws Exception {
        scenario("interop-lb", false, true);
    }

    private void scenario(String sess, boolean alwaysInvalidate, boolean full) throws Exception {
        LinuxRnbd.unloadAll();
        try (Appliance a = Appliance.onDisni(List.of(Guest.addr(), Guest.addr2()), PORT, alwaysInvalidate)) {
            a.exportMemory("mem0", DISK_MIB << 20);
            Guest.step("linux->appliance (always_invalidate " + alwaysInvalidate + "): load rnbd-client");
            LinuxRnbd.loadClient();
            MapSpec spec = MapSpec.of(sess, "mem0", path(Guest.addr()), path(Guest.addr2())).destPort(PORT);
            Guest.step("map_device: " + spec.line());
            mapped = LinuxRnbd.map(spec);
            assertEquals((long) DISK_MIB << 20, mapped.size(), "size of " + mapped.dev());
            List<Path> paths = LinuxRnbd.paths(sess);
            assertEquals(2, paths.size(), "paths of " + sess + ": " + paths);
            for (Path p : paths) {
                assertEquals("connected", LinuxRnbd.state(p), p.toString());
            }
            RtrsServerSessionInfo onServer = a.rtrsServer().sessions().stream()
                    .filter(s -> s.name().equals(sess)).findFirst().orElseThrow();
            assertEquals(2, onServer.paths().size(), "one session of two paths on the appliance, as Linux opened it");
            LinuxRnbd.mpathPolicy(sess, "round-robin");

            Guest.step("verified IO");
            byte[] fixed = Disk.random(FIXED_MIB << 20, 1);
            Disk.write(mapped.dev(), 0, fixed, tmp);
            assertArrayEquals(fixed, Disk.read(mapped.dev(), 0, FIXED_MIB, tmp), "read back through " + mapped.dev());
            byte[] store = a.backend().store("mem0");
            assertArrayEquals(fixed, Arrays.copyOf(store, FIXED_MIB << 20), "the appliance's memory export holds it");
            for (Path p : paths) {
                RdmaStats s = LinuxRnbd.stats(p);
                assertTrue(s.writes() > 0 && s.reads() > 0, "path " + p.getFileName() + " carried reads and writes: " + s);
            }

            Guest.step("fio randwrite QD16 with crc32c verification");
            Guest.check(Guest.timeout(Duration.ofSeconds(60)), "fio", "--name=verify", "--filename=" + mapped.dev(),
                    "--ioengine=libaio", "--direct=1", "--rw=randwrite", "--bsrange=4k-124k",
                    "--iodepth=16", "--offset=" + (FIXED_MIB << 20), "--size=16m", "--verify=crc32c",
                    "--do_verify=1", "--verify_fatal=1", "--output-format=terse");
            if (!full) {
                unmap(sess);
                return;
            }

            Guest.step("ext4 on " + mapped.dev());
            Disk.ext4RoundTrip(mapped.dev(), tmp);

            Guest.step("IO loop; remove and re-add the path to " + Guest.addr2());
            Disk.write(mapped.dev(), 0, fixed, tmp);
            long errorsBefore = Disk.ioErrorLines();
            try (Disk.IoLoop io = new Disk.IoLoop(mapped.dev(), FIXED_MIB, DISK_MIB, 8, tmp)) {
                io.awaitMore(1);
                Path second = LinuxRnbd.pathTo(sess, Guest.addr2()).orElseThrow();
                LinuxRnbd.removePath(second);
                assertEquals(1, LinuxRnbd.paths(sess).size(), "paths after remove_path");
                Await.until("the appliance closed the removed path",
                        () -> a.rtrsServer().sessions().stream().filter(s -> s.name().equals(sess))
                                .allMatch(s -> s.paths().size() == 1), Guest.timeout(Duration.ofSeconds(10)));
                io.awaitMore(2);
                LinuxRnbd.addPath(sess, path(Guest.addr2()));
                Await.until("the re-added path connected",
                        () -> LinuxRnbd.pathTo(sess, Guest.addr2()).map(p -> "connected".equals(LinuxRnbd.state(p)))
                                .orElse(false), Guest.timeout(Duration.ofSeconds(10)));
                io.awaitMore(2);
                assertTrue(LinuxRnbd.stats(LinuxRnbd.pathTo(sess, Guest.addr2()).orElseThrow()).requests() > 0,
                        "the re-added path carries IO");
            }
            assertEquals(errorsBefore, Disk.ioErrorLines(), "I/O errors in the kernel log:\n" + Guest.dmesgTail(20));
            assertArrayEquals(fixed, Disk.read(mapped.dev(), 0, FIXED_MIB, tmp), "first 16 MiB after the path change");
            unmap(sess);
        }
    }

    private void unmap(String sess) {
        Guest.step("unmap");
        LinuxRnbd.unmap(mapped, false);
        Await.until("session " + sess + " closed",
                () -> !Files.exists(LinuxRnbd.session(sess)), Guest.timeout(Duration.ofSeconds(5)));
        mapped = null;
    }
}

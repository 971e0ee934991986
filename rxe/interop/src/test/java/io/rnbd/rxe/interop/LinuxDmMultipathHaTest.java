package io.rnbd.rxe.interop;

import static io.rnbd.rxe.interop.LinuxRnbd.path;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rnbd.api.RnbdServerAdmin.Role;
import io.rnbd.rxe.interop.LinuxRnbd.MapSpec;
import io.rnbd.rxe.interop.LinuxRnbd.Mapped;
import io.rnbd.testkit.Await;
import io.rnbd.testkit.block.FakeSharedBackend;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Linux recipe of docs/scale-out.md ("Linux hosts: dm-multipath over one rnbd device per
 * server"), with Linux's own rnbd-client: two appliance servers A (on rxe0) and B (on rxe1)
 * export one image with {@code ha = true}; the host maps it from each ({@code /dev/rnbdX} from A,
 * {@code /dev/rnbdY} from B) and stacks them with dm-multipath's failover path groups and
 * {@code queue_if_no_path}; fio with crc32c verification runs on the multipath device while A's
 * paths are cut (its RTRS server closed, the server alive and holding the image): dm-multipath
 * fails the path, requeues on B, and B takes the image over at the first write, fencing A.
 *
 * <p>What stands in for Ceph: the in-memory {@link FakeSharedBackend}, one cluster shared by the
 * two servers in this JVM (its lock, its blocklist), held to the RBD backend's rules by
 * SharedDeviceContractTest, which runs on both. A Ceph cluster in this guest (emulated by QEMU's
 * TCG, 15-20x slower than the host) would put a monitor and an OSD on the guest's 2 CPUs for the
 * whole run, and what the test checks here is Linux's side: the partition scans a standby
 * answers without moving the image, the path failover, the takeover at a write. The same
 * takeover on real Ceph is RbdHaIT's, on the host.
 */
class LinuxDmMultipathHaTest {
    @RegisterExtension
    static final LinuxModules linux = LinuxModules.eachTest();

    private static final int PORT_A = 1236;
    private static final int PORT_B = 1237;
    private static final int DISK_MIB = 64;
    private static final String IMAGE = "havol";
    private static final String DM = "rnbd-ha";
    /** The servers' default ha.holdoff.ms (rnbd-server's HaSettings). */
    private static final long HOLDOFF_MS = 10_000;

    @TempDir
    Path tmp;
    private Mapped viaA;
    private Mapped viaB;

    @BeforeAll
    static void prerequisites() {
        Guest.require(Guest.run(Duration.ofSeconds(10), "dmsetup", "version").ok(),
                "dmsetup is not installed (apt-get install dmsetup)");
        Guest.require(Guest.run(Duration.ofSeconds(10), "fio", "--version").ok(), "fio is not installed");
    }

    @AfterEach
    void cleanUp() {
        // dm-multipath holds both rnbd devices: it goes before LinuxModules unmaps them
        Guest.run(Duration.ofSeconds(30), "env", "DM_DISABLE_UDEV=1", "dmsetup", "remove", "--force", DM);
    }

    @Test
    void dmMultipathOverTwoServersMovesToTheStandbyWhichTakesTheImageOverAtTheFirstWrite() throws Exception {
        LinuxRnbd.unloadAll();
        FakeSharedBackend.Cluster cluster = new FakeSharedBackend.Cluster();
        try (Appliance a = Appliance.onDisni(List.of(Guest.addr()), PORT_A);
             Appliance b = Appliance.onDisni(List.of(Guest.addr2()), PORT_B)) {
            a.exportShared(IMAGE, DISK_MIB << 20, cluster, "A");
            b.exportShared(IMAGE, DISK_MIB << 20, cluster, "B");
            Guest.modprobe("dm-multipath");
            Guest.modprobe("dm-round-robin");
            LinuxRnbd.loadClient();

            Guest.step("map the image from both servers (each map scans its partition table: reads)");
            viaA = LinuxRnbd.map(MapSpec.of("ha-a", IMAGE, path(Guest.addr())).destPort(PORT_A));
            viaB = LinuxRnbd.map(MapSpec.of("ha-b", IMAGE, path(Guest.addr2())).destPort(PORT_B));
            Guest.check(Guest.timeout(Duration.ofSeconds(20)), "dd", "if=" + viaB.dev(), "of=/dev/null", "bs=4k",
                    "count=16", "iflag=direct"); // what dm-multipath's directio checker reads
            assertEquals("", cluster.owner(IMAGE), "the standbys' reads moved the image");
            assertEquals(Role.STANDBY, role(b));

            Guest.step("dm-multipath: failover path groups, A's first, queue_if_no_path");
            long sectors = viaA.size() / 512;
            // the guest runs no udev: without DM_DISABLE_UDEV dmsetup leaves /dev/mapper/NAME to
            // udev, nobody makes it, and a dd of that path opens a new file on /dev's tmpfs
            // (O_DIRECT there: EINVAL on 6.1). The kernel's own node, /dev/dm-N, is used below.
            Guest.check(Guest.timeout(Duration.ofSeconds(30)), "env", "DM_DISABLE_UDEV=1", "dmsetup", "create", DM,
                    "--table", "0 " + sectors + " multipath 1 queue_if_no_path 0 2 1 round-robin 0 1 1 " + viaA.dev()
                            + " 1 round-robin 0 1 1 " + viaB.dev() + " 1");
            Path mpath = Guest.waitForBlockDevice("dm-" + minorOf(Path.of("/dev/mapper", DM)),
                    Guest.timeout(Duration.ofSeconds(10)));
            byte[] first = Disk.random(4 << 20, 37);
            Disk.write(mpath, 0, first, tmp);
            long tookAt = System.currentTimeMillis();
            assertEquals(Role.ACTIVE, role(a), "A takes the image at the host's first write");
            assertEquals(Role.STANDBY, role(b));
            String holderA = cluster.owner(IMAGE);

            // A took the image at the first write above: the servers refuse to take it from a
            // holder younger than ha.holdoff.ms (10 s, wall clock, not slowed with the guest), and
            // without multipathd nothing reinstates a path dm-multipath failed on that refusal
            // (multipathd's checker would, and the write would go through after the hold-off).
            // A failure that real comes later; this one waits for the hold-off to pass
            // before fio starts (fio must still run when A is cut).
            long heldMs = System.currentTimeMillis() - tookAt;
            if (heldMs < HOLDOFF_MS + 1000) {
                Thread.sleep(HOLDOFF_MS + 1000 - heldMs);
            }
            Guest.step("fio with crc32c verification on " + mpath + "; A's paths cut meanwhile");
            Guest.Result[] fio = new Guest.Result[1];
            Thread io = new Thread(() -> fio[0] = Guest.run(Guest.timeout(Duration.ofSeconds(180)), "fio",
                    "--name=ha", "--filename=" + mpath, "--ioengine=libaio", "--direct=1", "--rw=randwrite",
                    "--bsrange=4k-124k", "--iodepth=16", "--offset=" + (8 << 20), "--size=24m", "--verify=crc32c",
                    "--do_verify=1", "--verify_fatal=1", "--output-format=terse"));
            io.start();
            Await.until("fio writes through A", () -> a.rnbdServer().exports().get(0).stats().writes() > 50,
                    Guest.timeout(Duration.ofSeconds(60)));
            assertTrue(io.isAlive(), "fio ended before A's paths were cut: " + fio[0]);
            a.rtrsServer().close(); // A lives, holds the image, and no host reaches it
            io.join(Guest.timeout(Duration.ofSeconds(200)).toMillis());
            assertFalse(io.isAlive(), "fio still running");
            assertTrue(fio[0].ok(), "fio on the multipath device: " + fio[0] + "\nkernel log:\n" + Guest.dmesgTail(30));

            assertEquals(Role.ACTIVE, role(b), "B took the image over at dm-multipath's first write");
            assertTrue(cluster.isFenced(holderA), "A was fenced by the takeover");
            assertEquals(1, b.rnbdServer().exports().get(0).ha().takeovers());
            String status = Guest.check(Guest.timeout(Duration.ofSeconds(10)), "dmsetup", "status", DM);
            assertTrue(status.contains(" F "), "dm-multipath failed A's path: " + status);
            assertArrayEquals(first, Disk.read(mpath, 0, 4, tmp), "what was written through A, read through B");
            byte[] store = Arrays.copyOf(cluster.store(IMAGE), 4 << 20);
            assertArrayEquals(first, store, "the image holds it");
            Guest.check(Guest.timeout(Duration.ofSeconds(30)), "env", "DM_DISABLE_UDEV=1", "dmsetup", "remove", DM);
        }
    }

    private static Role role(Appliance s) {
        return s.rnbdServer().exports().get(0).ha().role();
    }

    private static String minorOf(Path mapper) throws Exception {
        return Guest.check(Duration.ofSeconds(10), "dmsetup", "info", "-c", "--noheadings", "-o", "minor",
                mapper.getFileName().toString()).strip();
    }
}

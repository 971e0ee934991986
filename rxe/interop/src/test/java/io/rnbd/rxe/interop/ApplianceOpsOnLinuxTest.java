package io.rnbd.rxe.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.Capabilities;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rtrs.client.internal.ClientSession;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every op the appliance's RNBD client sends to Linux's rnbd-server, checked on the data Linux's
 * server wrote: the export is a loop device over a file on ext4 (on a brd RAM disk), which
 * takes discards (a punched hole) and write-zeroes (fallocate), so Linux's OPEN_RSP offers what
 * its kernel can. What the appliance sends follows that OPEN_RSP: WRITE_ZEROES only where the
 * server offers it (6.12 and 7.x; 6.1's op 5 is WRITE_SAME, so the appliance writes zero
 * buffers), DISCARD where max_discard_sectors is set, FUA and FLUSH where the cache policy says
 * write-back and FUA.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ApplianceOpsOnLinuxTest {
    @RegisterExtension
    static final LinuxModules linux = LinuxModules.perClass().requiring("brd", "loop");

    private static final String SESS = "interop-aops";
    private static final int MIB = 1 << 20;
    private static final int REGION = 4 * MIB;

    private Path tmp;
    private Path mnt;
    private String loop;
    private Appliance appliance;
    private RemoteBlockDevice dev;

    @BeforeAll
    void exportALoopDevice() throws Exception {
        LinuxRnbd.unloadAll();
        Guest.unload("brd");
        tmp = Files.createTempDirectory("aops");
        mnt = Files.createDirectories(tmp.resolve("mnt"));
        Guest.modprobe("brd", "rd_nr=1", "rd_size=" + 96 * 1024);
        Guest.modprobe("loop");
        Guest.check(Guest.timeout(Duration.ofSeconds(60)), "mkfs.ext4", "-q", "-F", "/dev/ram0");
        Guest.check(Guest.timeout(Duration.ofSeconds(30)), "mount", "/dev/ram0", mnt.toString());
        Guest.check("truncate", "-s", "48M", mnt.resolve("disk").toString());
        loop = Path.of(Guest.check("losetup", "--find", "--show", mnt.resolve("disk").toString()).trim())
                .getFileName().toString();
        LinuxRnbd.loadServer(LinuxRnbd.DEFAULT_PORT, "/dev", true);
        appliance = Appliance.onDisni(List.of(Guest.addr()), 0);
        ClientSession s = appliance.connect(SESS, List.of(new InetSocketAddress(Guest.addr(), LinuxRnbd.DEFAULT_PORT)));
        dev = appliance.map("rnbd-" + SESS, s, loop, AccessMode.RW);
        Guest.step("appliance mapped Linux " + LinuxRnbdProto.release() + "'s /dev/" + loop + ": " + dev.capabilities());
    }

    @AfterAll
    void tearDown() throws Exception {
        try {
            if (appliance != null) {
                appliance.close();
            }
        } finally {
            LinuxRnbd.unloadAll();
            if (loop != null) {
                Guest.run(Guest.timeout(Guest.COMMAND), "losetup", "-d", "/dev/" + loop);
            }
            Guest.run(Guest.timeout(Guest.COMMAND), "umount", mnt.toString());
            Guest.unload("brd");
        }
    }

    private static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(Guest.timeout(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
    }

    private void write(long off, byte[] data, boolean fua) throws Exception {
        for (int p = 0; p < data.length; p += 128 * 1024) {
            int n = Math.min(128 * 1024, data.length - p);
            await(dev.write(off + p, ByteBuffer.allocateDirect(n).put(data, p, n).flip(), fua));
        }
    }

    private byte[] readThroughAppliance(long off, int len) throws Exception {
        byte[] out = new byte[len];
        for (int p = 0; p < len; p += 128 * 1024) {
            int n = Math.min(128 * 1024, len - p);
            ByteBuffer b = ByteBuffer.allocateDirect(n);
            await(dev.read(off + p, b));
            b.get(0, out, p, n);
        }
        return out;
    }

    /** The bytes on Linux's side, O_DIRECT from the loop device the server exports. */
    private byte[] onLinux(long off, int len) throws Exception {
        return Disk.read(Path.of("/dev", loop), (int) (off / MIB), len / MIB, tmp);
    }

    @Test
    void linuxsOpenRspOffersWhatItsKernelCan() {
        Capabilities c = dev.capabilities();
        LinuxRnbdProto proto = LinuxRnbdProto.running();
        assertTrue(c.write() && c.trim(), "a loop device over ext4 discards: " + c);
        assertEquals(proto.writeZeroes(), c.zero(),
                "WRITE_ZEROES offered exactly where Linux " + LinuxRnbdProto.release() + " has op 5 as WRITE_ZEROES: " + c);
        assertTrue(c.flush(), "loop has a volatile write cache, so Linux says write-back: " + c);
    }

    @Test
    void writeAndReadLandOnLinuxsDevice() throws Exception {
        byte[] data = Disk.random(REGION, 21);
        write(0, data, false);
        assertArrayEquals(data, readThroughAppliance(0, REGION), "read back through the appliance");
        assertArrayEquals(data, onLinux(0, REGION), "on Linux's /dev/" + loop);
    }

    @Test
    void fuaWritesAndFlushReachLinuxsDevice() throws Exception {
        byte[] data = Disk.random(REGION, 22);
        List<String> rwbs;
        try (BlockTrace t = BlockTrace.of(loop)) {
            write(REGION, data, true);
            await(dev.flush());
            rwbs = t.rwbs();
        }
        // loop has a volatile cache and no FUA: Linux's server hands a FUA write to the block
        // layer, which follows it with a flush, and a FLUSH becomes a flush request; either
        // way the loop device is asked to flush (a leading F in rwbs)
        assertTrue(rwbs.stream().anyMatch(r -> r.startsWith("F")), "Linux's /dev/" + loop + " was asked to flush: " + rwbs);
        assertTrue(rwbs.stream().anyMatch(r -> r.contains("W")), "and to write: " + rwbs);
        assertArrayEquals(data, onLinux(REGION, REGION), "on Linux's /dev/" + loop);
    }

    @Test
    void discardedRangeReadsBackAsZeroes() throws Exception {
        write(2L * REGION, Disk.random(REGION, 23), false);
        try (BlockTrace t = BlockTrace.of(loop)) {
            await(dev.trim(2L * REGION, REGION));
            assertTrue(t.rwbs().stream().anyMatch(r -> r.contains("D")), "a discard reached /dev/" + loop + ": " + t.rwbs());
        }
        assertArrayEquals(new byte[REGION], readThroughAppliance(2L * REGION, REGION), "through the appliance");
        assertArrayEquals(new byte[REGION], onLinux(2L * REGION, REGION), "on Linux's /dev/" + loop);
    }

    @Test
    void writeZeroesReadsBackAsZeroesWhetherSentOrWritten() throws Exception {
        write(3L * REGION, Disk.random(REGION, 24), false);
        try (BlockTrace t = BlockTrace.of(loop)) {
            await(dev.writeZeroes(3L * REGION, REGION, false));
            // 6.1's server offers no WRITE_ZEROES: the appliance writes zero buffers (W); 6.12 and 7.x take op 5
            List<String> rwbs = t.rwbs();
            Guest.step("write-zeroes as /dev/" + loop + " saw it: " + rwbs);
            if (!dev.capabilities().zero()) {
                assertTrue(!rwbs.isEmpty() && rwbs.stream().allMatch(BlockTrace::writesData), "zero buffers written: " + rwbs);
            } else {
                assertTrue(!rwbs.isEmpty() && rwbs.stream().noneMatch(BlockTrace::writesData),
                        "no data written, the zeroes were Linux's to make: " + rwbs);
            }
        }
        assertArrayEquals(new byte[REGION], readThroughAppliance(3L * REGION, REGION), "through the appliance");
        assertArrayEquals(new byte[REGION], onLinux(3L * REGION, REGION), "on Linux's /dev/" + loop);
    }

    /** 512-byte blocks the export's backing file holds on ext4 (stat %b). */
    private long allocated() {
        return Long.parseLong(Guest.check("stat", "-c", "%b", mnt.resolve("disk").toString()).trim());
    }

    @Test
    void writeZeroesWithNounmapKeepsTheRangeAllocatedAndWithoutMayFreeIt() throws Exception {
        LinuxRnbdProto proto = LinuxRnbdProto.running();
        long off = 4L * REGION;
        write(off, Disk.random(REGION, 25), false);
        Guest.check("sync");
        long before = allocated();
        await(dev.writeZeroes(off, REGION, false, true));
        Guest.check("sync");
        long kept = allocated();
        assertArrayEquals(new byte[REGION], onLinux(off, REGION), "NOUNMAP: zeroes on Linux's /dev/" + loop);
        if (proto.writeZeroes() && !proto.nounmap()) {
            // 6.12: WRITE_ZEROES|NOUNMAP is sent (the client cannot tell 6.12 from 7.x: only the
            // major version travels) and 6.12's rnbd_to_bio_flags drops the flag, so its loop
            // punches a hole, as it does for Linux 7.x's own client
            assertTrue(kept <= before - REGION / 512, "6.12 drops NOUNMAP and unmaps: " + before + " -> " + kept);
        } else {
            // 6.1: zero buffers written; 7.x: REQ_NOUNMAP reaches loop (FALLOC_FL_ZERO_RANGE)
            assertTrue(kept >= before, "NOUNMAP keeps the range allocated: " + before + " -> " + kept + " blocks");
        }

        write(off, Disk.random(REGION, 26), false);
        Guest.check("sync");
        before = allocated();
        await(dev.writeZeroes(off, REGION, false, false));
        Guest.check("sync");
        long after = allocated();
        assertArrayEquals(new byte[REGION], onLinux(off, REGION), "zeroes on Linux's /dev/" + loop);
        if (proto.writeZeroes()) {
            // 6.12 and 7.x take op 5 without NOUNMAP; loop zeroes it with FALLOC_FL_PUNCH_HOLE
            assertTrue(after <= before - REGION / 512, "without NOUNMAP Linux's loop punched a hole: " + before + " -> " + after);
        } else {
            // 6.1: the appliance writes zero buffers, which stay allocated
            assertTrue(after >= before, "6.1: zero buffers written: " + before + " -> " + after);
        }
    }

    @Test
    void secureEraseIsRefusedWhereLinuxsServerOffersNone() throws Exception {
        long off = 5L * REGION;
        byte[] data = Disk.random(REGION, 27);
        write(off, data, false);
        assertTrue(!dev.capabilities().secureErase(), "a loop device has no secure erase, and Linux's OPEN_RSP says so");
        java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                java.util.concurrent.ExecutionException.class, () -> await(dev.secureErase(off, REGION)));
        assertTrue(e.getCause() instanceof io.rnbd.rnbd.api.BlockIoException b && b.errno() == 95,
                "EOPNOTSUPP: " + e.getCause());
        assertArrayEquals(data, onLinux(off, REGION), "untouched on Linux's /dev/" + loop);
    }
}

package io.rnbd.rxe.interop;

import static io.rnbd.rxe.interop.LinuxRnbd.path;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rnbd.proto.Io;
import io.rnbd.rxe.interop.LinuxRnbd.MapSpec;
import io.rnbd.rxe.interop.LinuxRnbd.Mapped;
import io.rnbd.testkit.block.FakeBlockDevice;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every op and flag Linux's rnbd-client sends, driven by the tools a Linux host uses on a block
 * device (dd, sync, blkdiscard, fallocate, ext4's journal), against an appliance memory export;
 * each checked twice: on the wire ({@link OpTap}: the rw word as Linux sent it) and on the data
 * (the export's bytes, and read back through Linux). What the kernel sends depends on its RNBD
 * ({@link LinuxRnbdProto}: 6.1 has no WRITE_ZEROES, 6.12 has it without flags, 7.x has
 * RNBD_F_NOUNMAP); each expectation says which.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LinuxClientOpsTest {
    @RegisterExtension
    static final LinuxModules linux = LinuxModules.perClass();

    private static final int PORT = 1236;
    private static final String SESS = "interop-ops";
    private static final int MIB = 1 << 20;
    /** Each test works in its own 4 MiB region of the 64 MiB export. */
    private static final int REGION = 4 * MIB;

    private Appliance appliance;
    private Mapped mapped;
    private String openRsp;
    private Path tmp;

    @BeforeAll
    void mapOnce() throws Exception {
        LinuxRnbd.unloadAll();
        tmp = Files.createTempDirectory("ops");
        appliance = Appliance.onDisni(List.of(Guest.addr()), PORT);
        appliance.exportMemory("ops0", 64 * MIB);
        appliance.exportMemory("ops1", 32 * MIB);
        LinuxRnbd.loadClient();
        long log = dmesgLines();
        mapped = LinuxRnbd.map(MapSpec.of(SESS, "ops0", path(Guest.addr())).destPort(PORT));
        openRsp = mappedAs(log);
        Guest.step("Linux " + LinuxRnbdProto.release() + " (" + LinuxRnbdProto.running() + ") mapped ops0: " + openRsp);
    }

    @AfterAll
    void unmapOnce() throws Exception {
        try {
            if (mapped != null && Files.exists(Path.of("/sys/class/block", mapped.name()))) {
                LinuxRnbd.unmap(mapped, true);
            }
            LinuxRnbd.unloadAll();
        } finally {
            if (appliance != null) {
                appliance.close();
            }
        }
    }

    @BeforeEach
    void resetTap() {
        appliance.received().reset();
    }

    private FakeBlockDevice device() {
        return appliance.backend().device("ops0");
    }

    private byte[] store(int off, int len) {
        return Arrays.copyOfRange(appliance.backend().store("ops0"), off, off + len);
    }

    private String dev() {
        return mapped.dev().toString();
    }

    @Test
    void theKernelsRnbdIsTheOneItsReleaseIsExpectedToSpeak() {
        assertEquals(LinuxRnbdProto.expectedFor(LinuxRnbdProto.release()), LinuxRnbdProto.running(),
                "rnbd-proto.h of Linux " + LinuxRnbdProto.release() + " (" + LinuxRnbdProto.header() + ")");
    }

    @Test
    void readAndWriteLandOnTheExportAndComeBack() throws Exception {
        byte[] data = Disk.random(REGION, 11);
        Disk.write(mapped.dev(), 0, data, tmp);
        assertArrayEquals(data, store(0, REGION), "the export holds what Linux wrote");
        assertArrayEquals(data, Disk.read(mapped.dev(), 0, 4, tmp), "read back through Linux");
        OpTap t = appliance.received();
        assertTrue(t.count(Io.OP_WRITE) >= 4 && t.count(Io.OP_READ) >= 4, "writes and reads on the wire: " + t);
    }

    @Test
    void anODsyncWriteIsAFuaWrite() throws Exception {
        assertTrue(openRsp.contains("fua: 1") && openRsp.contains("wc: 1"),
                "the appliance's memory export offers a write-back cache and FUA: " + openRsp);
        assertEquals("1", Guest.readSysfs(Path.of("/sys/block", mapped.name(), "queue", "fua")));
        byte[] data = Disk.random(MIB, 12);
        Path in = Files.write(tmp.resolve("fua.in"), data);
        int fuaBefore = device().fuaWrites();
        Disk.dd("if=" + in, "of=" + dev(), "bs=128k", "seek=" + (REGION / (128 * 1024)), "oflag=direct,dsync", "conv=notrunc");
        OpTap t = appliance.received();
        assertEquals(8, t.count(Io.OP_WRITE, Io.F_FUA, 0), "eight 128 KiB O_DSYNC writes arrive as WRITE|FUA: " + t);
        // and, on every kernel seen, each is followed by a FLUSH: blkdev_write_iter calls
        // generic_write_sync after the direct write, whose fsync (blkdev_fsync) flushes the cache
        assertEquals(8, t.count(Io.OP_FLUSH), "a FLUSH after each (the O_DSYNC write's fsync): " + t);
        assertPreflushOnlyOnFlushes(t);
        assertTrue(device().fuaWrites() - fuaBefore >= 8, "the backend saw FUA writes");
        assertArrayEquals(data, store(REGION, MIB));
    }

    @Test
    void fsyncOfTheDeviceIsAFlushAfterTheBufferedWrites() throws Exception {
        byte[] data = Disk.random(MIB, 13);
        Path in = Files.write(tmp.resolve("flush.in"), data);
        int flushesBefore = device().flushes();
        // buffered (page cache), then fsync(2) of the block device: blkdev_fsync writes the pages back, then flushes
        Disk.dd("if=" + in, "of=" + dev(), "bs=1M", "seek=" + (2 * REGION / MIB), "conv=notrunc,fsync");
        OpTap t = appliance.received();
        assertTrue(t.count(Io.OP_FLUSH) >= 1, "fsync sends a FLUSH: " + t);
        assertTrue(device().flushes() > flushesBefore, "and the backend flushed");
        assertArrayEquals(data, store(2 * REGION, MIB), "the written-back pages are on the export");
    }

    @Test
    void aJournalCommitsPreflushArrivesAsAFlushBeforeItsWriteNeverAsTheFlag() throws Exception {
        // ext4's journal commit is a write with REQ_PREFLUSH | REQ_FUA. blk-mq's flush machinery
        // (blk_insert_flush) sends the preflush as a flush request of its own and clears
        // REQ_PREFLUSH from the write before rnbd-clt sees it: on every kernel the wire has a
        // FLUSH and a FUA write; 7.x (2.1+) marks the flush request itself RNBD_F_PREFLUSH.
        long log = dmesgLines();
        Mapped second = LinuxRnbd.map(MapSpec.of(SESS, "ops1", path(Guest.addr())).destPort(PORT));
        try {
            assertTrue(mappedAs(log).contains("wc: 1"));
            appliance.received().reset();
            Path mnt = Files.createDirectories(tmp.resolve("mnt"));
            Guest.check(Guest.timeout(Duration.ofSeconds(60)), "mkfs.ext4", "-q", "-F", second.dev().toString());
            Guest.check(Guest.timeout(Duration.ofSeconds(30)), "mount", "-o", "barrier=1", second.dev().toString(), mnt.toString());
            try {
                Files.write(mnt.resolve("f"), Disk.random(256 * 1024, 14));
                Guest.check("sync", mnt.resolve("f").toString());
            } finally {
                Guest.check(Guest.timeout(Duration.ofSeconds(30)), "umount", mnt.toString());
            }
            OpTap t = appliance.received();
            assertTrue(t.count(Io.OP_FLUSH) >= 1, "the journal's preflush arrives as FLUSH: " + t);
            assertTrue(t.count(Io.OP_WRITE, Io.F_FUA, 0) >= 1, "the commit block as a FUA write: " + t);
            assertPreflushOnlyOnFlushes(t);
            Guest.check(Guest.timeout(Duration.ofSeconds(60)), "e2fsck", "-fn", second.dev().toString());
        } finally {
            LinuxRnbd.unmap(second, false);
        }
    }

    /**
     * RNBD_F_PREFLUSH never rides on a data write (blk-mq splits the preflush off); 7.x (2.1+)
     * sets it on every FLUSH (the flush request carries REQ_PREFLUSH, seen as flags 0x700:
     * SYNC|FUA|PREFLUSH), earlier kernels have no such flag (6.1 and 6.12 send SYNC|FUA, 0x300).
     */
    private static void assertPreflushOnlyOnFlushes(OpTap t) {
        assertEquals(0, t.count(Io.OP_WRITE, Io.F_PREFLUSH, 0), "no data write with PREFLUSH: " + t);
        if (LinuxRnbdProto.running().preflush()) {
            assertEquals(t.count(Io.OP_FLUSH), t.count(Io.OP_FLUSH, Io.F_PREFLUSH, 0), "7.x marks every FLUSH PREFLUSH: " + t);
        } else {
            assertEquals(0, t.withFlag(Io.F_PREFLUSH), "no PREFLUSH flag before 2.1: " + t);
        }
    }

    @Test
    void discardedRangeReadsBackAsZeroes() throws Exception {
        int off = 3 * REGION;
        Disk.write(mapped.dev(), off / MIB, Disk.random(REGION, 15), tmp);
        Guest.check("blkdiscard", "-o", Integer.toString(off), "-l", Integer.toString(REGION), dev());
        OpTap t = appliance.received();
        assertTrue(t.count(Io.OP_DISCARD) >= 1, "DISCARD on the wire: " + t);
        assertArrayEquals(new byte[REGION], store(off, REGION), "the export's range is zeroes");
        assertArrayEquals(new byte[REGION], Disk.read(mapped.dev(), off / MIB, 4, tmp), "and reads so through Linux");
    }

    @Test
    void zeroOutIsWriteZeroesWithNounmapWhereTheKernelSpeaksIt() throws Exception {
        // BLKZEROOUT (blkdiscard -z) is blkdev_issue_zeroout(..., BLKDEV_ZERO_NOUNMAP)
        LinuxRnbdProto proto = LinuxRnbdProto.running();
        int off = 4 * REGION;
        Disk.write(mapped.dev(), off / MIB, Disk.random(REGION, 16), tmp);
        appliance.received().reset();
        int noUnmapBefore = device().noUnmapZeroes();
        Guest.check("blkdiscard", "-z", "-o", Integer.toString(off), "-l", Integer.toString(REGION), dev());
        OpTap t = appliance.received();
        if (!proto.writeZeroes()) {
            // 6.1: no WRITE_ZEROES in RNBD; the block layer writes zero pages instead
            assertEquals(0, t.count(Io.OP_WRITE_ZEROES), "6.1 never sends op 5 (its WRITE_SAME): " + t);
            assertTrue(t.count(Io.OP_WRITE) >= 1, "zeroes written as WRITEs: " + t);
        } else if (proto.nounmap()) {
            // 7.x (2.2): the caller's "do not unmap" travels as RNBD_F_NOUNMAP
            assertTrue(t.count(Io.OP_WRITE_ZEROES, Io.F_NOUNMAP, 0) >= 1, "WRITE_ZEROES|NOUNMAP: " + t);
            assertEquals(0, t.count(Io.OP_WRITE_ZEROES, 0, Io.F_NOUNMAP), "every one with NOUNMAP: " + t);
            assertTrue(device().noUnmapZeroes() > noUnmapBefore, "the backend was told not to unmap");
        } else {
            // 6.12 (2.0 with op 5): WRITE_ZEROES, the NOUNMAP hint dropped
            assertTrue(t.count(Io.OP_WRITE_ZEROES) >= 1, "WRITE_ZEROES: " + t);
            assertEquals(0, t.withFlag(Io.F_NOUNMAP), "no flag before 2.2: " + t);
        }
        assertArrayEquals(new byte[REGION], store(off, REGION), "the export's range is zeroes");
        assertArrayEquals(new byte[REGION], Disk.read(mapped.dev(), off / MIB, 4, tmp), "and reads so through Linux");
    }

    @Test
    void punchedHoleIsWriteZeroesWithoutNounmapWhereTheKernelSpeaksIt() throws Exception {
        // fallocate -p on a block device: blkdev_issue_zeroout(..., BLKDEV_ZERO_NOFALLBACK), unmapping allowed
        LinuxRnbdProto proto = LinuxRnbdProto.running();
        int off = 5 * REGION;
        byte[] data = Disk.random(REGION, 17);
        Disk.write(mapped.dev(), off / MIB, data, tmp);
        appliance.received().reset();
        Guest.Result r = Guest.run(Guest.timeout(Guest.COMMAND), "fallocate", "-p", "-o", Integer.toString(off),
                "-l", Integer.toString(REGION), dev());
        OpTap t = appliance.received();
        if (!proto.writeZeroes()) {
            // 6.1: no WRITE_ZEROES and no fallback allowed: EOPNOTSUPP, nothing sent, nothing changed
            assertFalse(r.ok(), "6.1 cannot punch a hole in an RNBD device: " + r);
            assertTrue(r.output().contains("unsupported") || r.output().contains("not supported"), r.toString());
            assertEquals(0, t.count(Io.OP_WRITE_ZEROES) + t.count(Io.OP_WRITE), "nothing sent: " + t);
            assertArrayEquals(data, store(off, REGION), "the range is untouched");
            return;
        }
        assertTrue(r.ok(), r.toString());
        assertTrue(t.count(Io.OP_WRITE_ZEROES, 0, Io.F_NOUNMAP) >= 1, "WRITE_ZEROES without NOUNMAP: " + t);
        assertEquals(0, t.withFlag(Io.F_NOUNMAP), "unmapping allowed: " + t);
        assertArrayEquals(new byte[REGION], store(off, REGION), "the export's range is zeroes");
        assertArrayEquals(new byte[REGION], Disk.read(mapped.dev(), off / MIB, 4, tmp), "and reads so through Linux");
    }

    /**
     * The memory backend erases securely, and an appliance client is offered it, but Linux's
     * client never is: its rnbd_client_xfer_request maps a SECURE_ERASE's absent payload with
     * blk_rq_map_sg (DISCARD and WRITE_ZEROES are exempted, SECURE_ERASE is not), and with
     * secure_discard offered, {@code blkdiscard -s} on the device never returned, on 6.1, 6.12
     * and 7.3 alike, leaving the device wedged. So: secure_discard 0, the ioctl refused before
     * the wire, the range untouched.
     */
    @Test
    void secureEraseIsNotOfferedToLinuxsClientAndRefusedBeforeTheWire() throws Exception {
        assertEquals(0, secureDiscard(openRsp), "no secure_discard for Linux's client: " + openRsp);
        int off = 6 * REGION;
        byte[] data = Disk.random(REGION, 18);
        Disk.write(mapped.dev(), off / MIB, data, tmp);
        appliance.received().reset();
        Guest.Result r = Guest.run(Guest.timeout(Guest.COMMAND), "blkdiscard", "-s", "-o", Integer.toString(off),
                "-l", Integer.toString(REGION), dev());
        OpTap t = appliance.received();
        assertFalse(r.ok(), "no secure erase on a device not offered it: " + r);
        assertEquals(0, t.count(Io.OP_SECURE_ERASE), t.toString());
        assertArrayEquals(data, store(off, REGION), "the range is untouched");
    }

    @Test
    void anErrnoFromTheBackendReachesLinuxAsThatErrorAndThePathStays() throws Exception {
        // rnbd-clt ends the request with errno_to_blk_status(the answer's errno): EIO stays EIO,
        // ENOSPC becomes BLK_STS_NOSPC, which the caller sees as ENOSPC; nothing is retried or
        // failed over, and the path is not touched
        int off = 7 * REGION;
        Path in = Files.write(tmp.resolve("err.in"), Disk.random(128 * 1024, 19));
        device().failWith(5);   // EIO
        Guest.Result read;
        Guest.Result write;
        try {
            read = Guest.run(Guest.timeout(Guest.COMMAND), "dd", "if=" + dev(), "of=/dev/null", "bs=128k", "count=1",
                    "skip=" + off / (128 * 1024), "iflag=direct");
            device().failWith(28);   // ENOSPC
            write = Guest.run(Guest.timeout(Guest.COMMAND), "dd", "if=" + in, "of=" + dev(), "bs=128k", "count=1",
                    "seek=" + off / (128 * 1024), "oflag=direct", "conv=notrunc");
        } finally {
            device().failWith(0);
        }
        assertFalse(read.ok(), read.toString());
        assertTrue(read.output().contains("Input/output error"), "EIO arrives as EIO: " + read);
        assertFalse(write.ok(), write.toString());
        assertTrue(write.output().contains("No space left on device"), "ENOSPC arrives as ENOSPC: " + write);
        for (Path p : LinuxRnbd.paths(SESS)) {
            assertEquals("connected", LinuxRnbd.state(p), "an IO error is no path error: " + p);
        }
        assertEquals("open", LinuxRnbd.deviceState(mapped));
        Disk.dd("if=" + in, "of=" + dev(), "bs=128k", "count=1", "seek=" + off / (128 * 1024), "oflag=direct", "conv=notrunc");
        assertArrayEquals(Files.readAllBytes(in), store(off, 128 * 1024), "and the next write works");
    }

    // --- the kernel log's "map_device: Device mapped as ..." line: OPEN_RSP as Linux read it ----------

    private static long dmesgLines() {
        return Guest.check("dmesg").lines().count();
    }

    /** The first "Device mapped as" line after line {@code from} of the kernel log. */
    private static String mappedAs(long from) {
        return Guest.check("dmesg").lines().skip(from).filter(l -> l.contains("Device mapped as")).findFirst()
                .orElseThrow(() -> new AssertionError("no 'Device mapped as' line in the kernel log:\n" + Guest.dmesgTail(20)));
    }

    private static int secureDiscard(String mappedAs) {
        Matcher m = Pattern.compile("secure_discard: (\\d+)").matcher(mappedAs);
        assertTrue(m.find(), mappedAs);
        return Integer.parseInt(m.group(1));
    }
}

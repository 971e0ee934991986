package io.rnbd.rnbd.server.internal;

import static io.rnbd.rnbd.server.internal.Wire.empty;
import static io.rnbd.rnbd.server.internal.Wire.get;
import static io.rnbd.rnbd.server.internal.Wire.readNow;
import static io.rnbd.rnbd.server.internal.Wire.writeNow;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportState;
import io.rnbd.rnbd.proto.Close;
import io.rnbd.rnbd.proto.Io;
import io.rnbd.rnbd.proto.Open;
import io.rnbd.rnbd.proto.OpenRsp;
import io.rnbd.rnbd.proto.SessInfo;
import io.rnbd.rnbd.proto.SessInfoRsp;
import io.rnbd.testkit.Await;
import io.rnbd.testkit.FakeScheduler;
import io.rnbd.testkit.LogCapture;
import io.rnbd.testkit.block.FakeBackend;
import io.rnbd.testkit.block.FakeBlockDevice;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Arrays;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class RnbdServerTest {
    private static final int SIZE = 1 << 20;
    private static final int MAX_IO = 64 * 1024;

    private FakeScheduler scheduler;
    private RnbdServer server;
    private FakeBackend backend;
    private FakeRtrs rtrs;

    @BeforeEach
    void setUp() {
        scheduler = new FakeScheduler();
        server = new RnbdServer(scheduler);
        backend = new FakeBackend(MAX_IO);
        server.backendAdded("memory", backend);
        server.addExport(export("disk", false, Set.of(), 0));
        rtrs = new FakeRtrs(server);
    }

    @AfterEach
    void tearDown() throws Exception {
        rtrs.close();
        assertEquals(0, rtrs.violations(), "requests completed twice");
        server.close();
    }

    private static ExportConfig export(String name, boolean ro, Set<String> allowed, long waitMs) {
        return new ExportConfig(name, "memory", ro, allowed, waitMs, Map.of("id", name, "size", "" + SIZE));
    }

    /** errno of OPEN, and the answer when it succeeded. */
    private record Opened(int errno, OpenRsp rsp) {
    }

    private static Opened open(FakeRtrs.Client c, String name, AccessMode mode) {
        ByteBuffer dst = ByteBuffer.allocate(OpenRsp.SIZE);
        int errno = readNow(c, new Open(mode, name), dst);
        if (errno != 0) {
            return new Opened(errno, null);
        }
        try {
            return new Opened(0, OpenRsp.decode(dst));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static int openOk(FakeRtrs.Client c, String name, AccessMode mode) {
        Opened o = open(c, name, mode);
        assertEquals(0, o.errno(), () -> "OPEN " + name + " " + mode + ": " + Errno.name(o.errno()));
        return o.rsp().deviceId();
    }

    private static int write(FakeRtrs.Client c, int dev, long offset, byte[] data) {
        return writeNow(c, Io.of(dev, offset / 512, Io.OP_WRITE, 0, data.length), ByteBuffer.wrap(data));
    }

    private static byte[] read(FakeRtrs.Client c, int dev, long offset, int len) {
        ByteBuffer dst = ByteBuffer.allocate(len);
        assertEquals(0, readNow(c, Io.of(dev, offset / 512, Io.OP_READ, 0, len), dst));
        return dst.array();
    }

    @Test
    void sessInfoAnswersTheCommonVersion() throws Exception {
        FakeRtrs.Client c = rtrs.connect("s1");
        ByteBuffer dst = ByteBuffer.allocate(SessInfoRsp.SIZE);
        assertEquals(0, readNow(c, new SessInfo(7), dst));
        assertEquals(2, SessInfoRsp.decode(dst).version());
        dst.clear();
        assertEquals(0, readNow(c, new SessInfo(1), dst));
        assertEquals(1, SessInfoRsp.decode(dst).version());
    }

    @Test
    void openAnswersGeometry() {
        FakeRtrs.Client c = rtrs.connect("s1");
        OpenRsp rsp = open(c, "disk", AccessMode.RW).rsp();
        assertEquals(SIZE / 512, rsp.nsectors());
        assertEquals(512, rsp.logicalBlockSize());
        assertEquals(4096, rsp.physicalBlockSize());
        assertEquals(MAX_IO / 512, rsp.maxHwSectors());
        assertTrue(rsp.maxDiscardSectors() > 0);
        assertTrue(rsp.maxWriteZeroesSectors() > 0);
        assertEquals(OpenRsp.CACHE_FUA | OpenRsp.CACHE_WRITEBACK, rsp.cachePolicy());
        assertEquals(rsp.deviceId(), open(c, "disk", AccessMode.RW).rsp().deviceId(), "re-open is idempotent");
        OpenRsp ro = open(rtrs.connect("s2"), "disk", AccessMode.RO).rsp();
        assertEquals(0, ro.maxDiscardSectors(), "no discard through a read-only mapping");
        assertNotEquals(rsp.deviceId(), ro.deviceId());
    }

    @Test
    void accessModeMatrix() {
        FakeRtrs.Client ro1 = rtrs.connect("ro1");
        FakeRtrs.Client ro2 = rtrs.connect("ro2");
        FakeRtrs.Client rw = rtrs.connect("rw");
        FakeRtrs.Client rw2 = rtrs.connect("rw2");
        FakeRtrs.Client mig = rtrs.connect("mig");
        FakeRtrs.Client mig2 = rtrs.connect("mig2");
        openOk(ro1, "disk", AccessMode.RO);
        openOk(ro2, "disk", AccessMode.RO);
        int rwId = openOk(rw, "disk", AccessMode.RW);
        assertEquals(Errno.EBUSY, open(rw2, "disk", AccessMode.RW).errno(), "second RW");
        openOk(mig, "disk", AccessMode.MIGRATION);
        assertEquals(Errno.EBUSY, open(mig2, "disk", AccessMode.MIGRATION).errno(), "third writer");
        assertEquals(Errno.EBUSY, open(rw2, "disk", AccessMode.RW).errno(), "RW while migrating");
        assertEquals(4, server.exports().get(0).openers().size());

        assertEquals(0, writeNow(rw, new Close(rwId), empty()));
        assertEquals(Errno.EBUSY, open(rw2, "disk", AccessMode.RW).errno(), "the migration target still writes");
        openOk(mig2, "disk", AccessMode.MIGRATION);
        mig.close();
        mig2.close();
        openOk(rw2, "disk", AccessMode.RW);
    }

    @Test
    void readOnlyExportAndUnknownExportAndAllowedSessions() {
        server.addExport(export("ro", true, Set.of(), 0));
        server.addExport(export("private", false, Set.of("alice", "bob"), 0));
        FakeRtrs.Client c = rtrs.connect("eve");
        assertEquals(Errno.EROFS, open(c, "ro", AccessMode.RW).errno());
        assertEquals(Errno.EROFS, open(c, "ro", AccessMode.MIGRATION).errno());
        openOk(c, "ro", AccessMode.RO);
        assertEquals(Errno.ENOENT, open(c, "nope", AccessMode.RO).errno());
        assertEquals(Errno.EACCES, open(c, "private", AccessMode.RO).errno());
        openOk(rtrs.connect("alice"), "private", AccessMode.RW);
        // allowed.sessions names sessions only: a host id there is no longer a way in
        assertEquals(Errno.EACCES, open(rtrs.connectAs("x", "bob", "chap", true), "private", AccessMode.RO).errno());
    }

    /**
     * allowed.hosts matches the host id the authenticator proved. A client that claims an
     * allowed host's id without its key (auth none: a claim; CHAP would refuse the key) and a
     * client that did not authenticate at all (a Linux rnbd-client) are refused, with the
     * reason in the log; an explicitly trusted claim and a proven id are let in.
     */
    @Test
    void allowedHostsRequireAProvenHostId() {
        server.addExport(export("vault", false, Set.of(), 0).withAllowedHosts(Set.of("host-a"), false));
        server.addExport(export("lab", false, Set.of(), 0).withAllowedHosts(Set.of("host-a"), true));
        server.addExport(export("any-authenticated", false, Set.of(), 0).withAllowedHosts(Set.of("*"), false));
        server.addExport(export("open", false, Set.of(), 0));

        FakeRtrs.Client claimer = rtrs.connectAs("eve", "host-a", "none", false);
        FakeRtrs.Client linux = rtrs.connectAs("linux1", "", "", false);
        FakeRtrs.Client otherHost = rtrs.connectAs("mallory", "host-m", "chap", true);
        FakeRtrs.Client hostA = rtrs.connectAs("a1", "host-a", "chap", true);

        try (LogCapture log = LogCapture.start()) {
            assertEquals(Errno.EACCES, open(claimer, "vault", AccessMode.RO).errno(), "a claimed id is refused");
            assertTrue(log.contains("was claimed (none), not proven"), log.lines().toString());
            assertEquals(Errno.EACCES, open(linux, "vault", AccessMode.RO).errno(), "no authentication is refused");
            assertTrue(log.contains("session linux1 may not open export vault: it requires an authenticated host"),
                    log.lines().toString());
            assertEquals(Errno.EACCES, open(otherHost, "vault", AccessMode.RO).errno(), "another proven host");
            assertTrue(log.contains("host 'host-m' is not in allowed.hosts"), log.lines().toString());
        }
        openOk(hostA, "vault", AccessMode.RW);

        openOk(claimer, "lab", AccessMode.RO);
        assertEquals(Errno.EACCES, open(linux, "lab", AccessMode.RO).errno(), "trusting claims needs a claim");
        assertEquals(Errno.EACCES, open(otherHost, "lab", AccessMode.RO).errno());

        openOk(otherHost, "any-authenticated", AccessMode.RO);
        assertEquals(Errno.EACCES, open(claimer, "any-authenticated", AccessMode.RO).errno());
        assertEquals(Errno.EACCES, open(linux, "any-authenticated", AccessMode.RO).errno());

        openOk(linux, "open", AccessMode.RO);
        openOk(claimer, "open", AccessMode.RO);
    }

    /** Linux's dev_search_path: the OPEN's name resolved under the search path, %SESSNAME% a per-session namespace. */
    @Test
    void openResolvesTheDeviceNameAsLinuxsRnbdServer() {
        server.addExport(new ExportConfig("ram", "memory", false, Set.of(), 0,
                Map.of("id", "ram", "size", "" + SIZE), "/dev/ram0"));
        FakeRtrs.Client c = rtrs.connect("host-a");
        openOk(c, "/dev/ram0", AccessMode.RO);
        openOk(c, "dev//ram0", AccessMode.RO);
        openOk(c, "disk", AccessMode.RO);
        assertEquals(Errno.ENOENT, open(c, "ram", AccessMode.RO).errno(), "the name alone is not the path");
        assertEquals(Errno.EINVAL, open(c, "../dev/ram0", AccessMode.RO).errno());

        server.devSearchPath("/srv/%SESSNAME%/ignored");
        server.addExport(new ExportConfig("a-disk", "memory", false, Set.of(), 0,
                Map.of("id", "a-disk", "size", "" + SIZE), "/srv/host-a/disk1"));
        openOk(c, "disk1", AccessMode.RW);
        assertEquals(Errno.ENOENT, open(rtrs.connect("host-b"), "disk1", AccessMode.RO).errno(),
                "another session's namespace");
        assertEquals(Errno.ENOENT, open(c, "disk", AccessMode.RO).errno(), "/disk is outside the namespace now");
    }

    @Test
    void twoExportsCannotShareAPath() {
        assertThrows(IllegalStateException.class, () -> server.addExport(new ExportConfig("other", "memory", false,
                Set.of(), 0, Map.of(), "/disk")));
        assertThrows(IllegalArgumentException.class, () -> new ExportConfig("x", "memory", false, Set.of(), 0,
                Map.of(), "relative/path"));
    }

    @Test
    void devSearchPathResolution() throws Exception {
        assertEquals("/mem0", new DevSearchPath("/").resolve("s", "mem0"));
        assertEquals("/dev/ram0", new DevSearchPath("/").resolve("s", "/dev/ram0"));
        assertEquals("/srv/s/d", new DevSearchPath("/srv/%SESSNAME%").resolve("s", "d"));
        assertEquals("/srv/s/d", new DevSearchPath("/srv/%SESSNAME%/rest").resolve("s", "d"));
        assertEquals("/x/y", new DevSearchPath("/x//").resolve("s", "//y"));
        assertEquals(Errno.EINVAL, assertThrows(BlockIoException.class,
                () -> new DevSearchPath("/").resolve("s", "a/../b")).errno());
    }

    @Test
    void ioValidation() {
        FakeRtrs.Client c = rtrs.connect("s1");
        int rw = openOk(c, "disk", AccessMode.RW);
        int ro = openOk(rtrs.connect("s2"), "disk", AccessMode.RO);
        FakeRtrs.Client c2 = rtrs.connect("s3");
        int ro3 = openOk(c2, "disk", AccessMode.RO);
        byte[] block = new byte[4096];

        assertEquals(Errno.EROFS, writeNow(c2, Io.of(ro3, 0, Io.OP_WRITE, 0, 4096), ByteBuffer.wrap(block)));
        assertEquals(Errno.EROFS, writeNow(c2, Io.of(ro3, 0, Io.OP_DISCARD, 0, 4096), empty()));
        assertEquals(Errno.EROFS, writeNow(c2, Io.of(ro3, 0, Io.OP_WRITE_ZEROES, 0, 4096), empty()));
        assertEquals(0, writeNow(c2, Io.of(ro3, 0, Io.OP_FLUSH, 0, 0), empty()), "flush is harmless on RO");

        assertEquals(Errno.ENXIO, writeNow(c, Io.of(ro, 0, Io.OP_WRITE, 0, 4096), ByteBuffer.wrap(block)),
                "another session's device id");
        assertEquals(Errno.ENXIO, writeNow(c, Io.of(rw + 12345, 0, Io.OP_WRITE, 0, 4096), ByteBuffer.wrap(block)));

        assertEquals(Errno.EINVAL, write(c, rw, SIZE - 2048, block), "beyond the end");
        assertEquals(Errno.EINVAL, write(c, rw, SIZE, block), "at the end");
        assertEquals(Errno.EINVAL, writeNow(c, Io.of(rw, 0, Io.OP_WRITE, 0, 100), ByteBuffer.allocate(100)),
                "misaligned length");
        assertEquals(Errno.EINVAL, writeNow(c, Io.of(rw, 0, Io.OP_WRITE, 0, 0), empty()), "empty write");
        assertEquals(Errno.EINVAL, writeNow(c, Io.of(rw, 0, Io.OP_WRITE, 0, 8192), ByteBuffer.wrap(block)),
                "bi_size lies about the data");
        assertEquals(Errno.EINVAL, readNow(c, Io.of(rw, 0, Io.OP_READ, 0, 8192), ByteBuffer.allocate(4096)),
                "read into a smaller buffer");
        assertEquals(Errno.EINVAL, writeNow(c, Io.of(rw, 0, Io.OP_READ, 0, 4096), ByteBuffer.wrap(block)),
                "read sent as a write");
        assertEquals(Errno.EINVAL, readNow(c, Io.of(rw, 0, Io.OP_WRITE, 0, 4096), ByteBuffer.allocate(4096)),
                "write sent as a read");
        assertEquals(Errno.EINVAL, writeNow(c, Io.of(rw, 0, Io.OP_FLUSH, 0, 0), ByteBuffer.wrap(block)),
                "flush with data");
        assertEquals(Errno.EINVAL, writeNow(c, Io.of(rw, 0, Io.OP_DISCARD, 0, SIZE + 512), empty()),
                "discard beyond the end");
        assertEquals(Errno.EINVAL, writeNow(c, Io.of(rw, 1L << 54, Io.OP_WRITE, 0, 4096), ByteBuffer.wrap(block)),
                "a sector whose byte offset is past 2^63: refused above the backend, which trusts the server");
        assertEquals(Errno.EROFS, writeNow(c2, Io.of(ro3, 0, Io.OP_SECURE_ERASE, 0, 4096), empty()));
        byte[] marked = new byte[512];
        java.util.Arrays.fill(marked, (byte) 0x5a);
        assertEquals(0, write(c, rw, 512, marked));
        assertEquals(Errno.EINVAL, writeNow(c, Io.of(rw, (1L << 55) + 1, Io.OP_WRITE, 0, 512),
                ByteBuffer.wrap(new byte[512])), "sector 2^55 + 1: its byte offset wraps around to 512 (Io.decode refuses it)");
        assertArrayEquals(marked, read(c, rw, 512, 512), "the wrapped write reached the device");

        assertEquals(0, write(c, rw, SIZE - 4096, block), "last block is fine");
        assertTrue(server.exports().get(0).stats().errors() >= 14);
        assertEquals(2, server.exports().get(0).stats().writes());
    }

    /**
     * Linux 6.1's rnbd-client sizes its requests by the session's max IO (chunk.size − 4 KiB,
     * 252 KiB with the appliance's 256 KiB chunks) and ignores OPEN_RSP's max_hw_sectors: the
     * server splits what the device cannot take whole, as Linux's block layer does, instead of
     * refusing it (EINVAL, which the rxe interop run saw as EIO on a 1 MiB dd). The fake device
     * refuses anything beyond its max, so a piece too large would fail here.
     */
    @Test
    void aReadOrWriteLargerThanTheDeviceTakesIsSplitIntoPiecesItDoes() {
        // the session's max IO, as a 256 KiB chunk gives Linux's client 252 KiB
        FakeRtrs.Client c = rtrs.connect("s1", "h", 8, 4 * MAX_IO, false);
        int dev = openOk(c, "disk", AccessMode.RW);
        byte[] data = new byte[3 * MAX_IO + 4096];
        new Random(7).nextBytes(data);
        long opsBefore = backend.device("disk").ops();
        int fuaBefore = backend.device("disk").fuaWrites();
        assertEquals(0, writeNow(c, Io.of(dev, 8192 / 512, Io.OP_WRITE, Io.F_FUA, data.length), ByteBuffer.wrap(data)));
        assertEquals(4, backend.device("disk").ops() - opsBefore, "three pieces of max IO and the rest");
        assertEquals(4, backend.device("disk").fuaWrites() - fuaBefore, "every piece of a FUA write is FUA");
        assertEquals(MAX_IO, backend.device("disk").largestIo());
        assertArrayEquals(data, read(c, dev, 8192, data.length), "read back in pieces, in order");
        assertArrayEquals(Arrays.copyOfRange(data, MAX_IO, 2 * MAX_IO), read(c, dev, 8192 + MAX_IO, MAX_IO),
                "each piece landed where it belongs");
        var stats = server.exports().get(0).stats();
        assertEquals(1, stats.writes(), "one request, whatever the device saw");
        assertEquals(data.length, stats.writeBytes());
        assertEquals(0, stats.errors());
        // a piece that fails fails the whole: the last piece crosses the end of the device
        assertEquals(Errno.EINVAL, write(c, dev, SIZE - 2 * MAX_IO, new byte[3 * MAX_IO]), "beyond the end");
    }

    @Test
    void dataOpsReachTheDevice() {
        FakeRtrs.Client c = rtrs.connect("s1");
        int dev = openOk(c, "disk", AccessMode.RW);
        byte[] data = new byte[MAX_IO];
        new Random(1).nextBytes(data);
        assertEquals(0, write(c, dev, 8192, data));
        assertArrayEquals(data, read(c, dev, 8192, data.length));
        assertEquals(0, writeNow(c, Io.of(dev, 8192 / 512, Io.OP_DISCARD, 0, 4096), empty()));
        assertArrayEquals(new byte[4096], read(c, dev, 8192, 4096));
        assertEquals(0, writeNow(c, Io.of(dev, 16384 / 512, Io.OP_WRITE_ZEROES, Io.F_NOUNMAP, 4096), empty()));
        assertArrayEquals(new byte[4096], read(c, dev, 16384, 4096));
        int before = backend.device("disk").flushes();
        assertEquals(0, writeNow(c, Io.of(dev, 0, Io.OP_WRITE, Io.F_PREFLUSH | Io.F_FUA, 4096), ByteBuffer.wrap(data, 0, 4096)));
        assertEquals(0, writeNow(c, Io.of(dev, 0, Io.OP_FLUSH, 0, 0), empty()));
        assertEquals(before + 2, backend.device("disk").flushes());
        // Linux 6.1's client: a FLUSH is an RTRS read without data (rq_data_dir(REQ_OP_FLUSH) == READ)
        // with SYNC|FUA set (op_is_flush) and sector -1 (blk_rq_init), as rnbd_client_xfer_request sends it
        assertEquals(0, readNow(c, Io.of(dev, -1, Io.OP_FLUSH, Io.F_SYNC | Io.F_FUA, 0), empty()));
        assertEquals(before + 3, backend.device("disk").flushes());
        var stats = server.exports().get(0).stats();
        assertEquals(3, stats.reads());
        assertEquals(MAX_IO + 8192, stats.readBytes());
        assertEquals(2, stats.writes(), "discard, write-zeroes and flush are not writes");
        assertEquals(0, stats.inflight());
    }

    /**
     * Protocol 2.2 toward the backend: NOUNMAP reaches it as noUnmap, SECURE_ERASE as a secure
     * erase where the device can (else EOPNOTSUPP, and OPEN_RSP never offered it).
     */
    @Test
    void writeZeroesCarriesNoUnmapAndSecureEraseReachesADeviceThatCan() {
        FakeRtrs.Client c = rtrs.connectAs("s1", "host1", "none", false);   // an appliance client
        OpenRsp rsp = open(c, "disk", AccessMode.RW).rsp();
        assertTrue(rsp.secureDiscard(), "the fake device can erase securely, and discard");
        int dev = rsp.deviceId();
        byte[] data = new byte[8192];
        Arrays.fill(data, (byte) 0x11);
        assertEquals(0, write(c, dev, 0, data));
        assertEquals(0, writeNow(c, Io.of(dev, 0, Io.OP_WRITE_ZEROES, 0, 4096), empty()));
        assertEquals(0, backend.device("disk").noUnmapZeroes(), "no NOUNMAP: the device may unmap");
        assertEquals(0, writeNow(c, Io.of(dev, 0, Io.OP_WRITE_ZEROES, Io.F_NOUNMAP, 4096), empty()));
        assertEquals(1, backend.device("disk").noUnmapZeroes());
        assertEquals(2, backend.device("disk").writeZeroes());
        assertEquals(0, writeNow(c, Io.of(dev, 8, Io.OP_SECURE_ERASE, 0, 4096), empty()));
        assertEquals(1, backend.device("disk").secureErases());
        assertArrayEquals(new byte[8192], read(c, dev, 0, 8192));

        server.backendAdded("plain", new io.rnbd.rnbd.api.BlockBackend() {
            @Override
            public String type() {
                return "plain";
            }

            @Override
            public io.rnbd.rnbd.api.BlockDevice open(Map<String, String> params, boolean readOnly) {
                return new FakeBlockDevice(SIZE).withCapabilities(new io.rnbd.rnbd.api.Capabilities(true, true, true,
                        true, true, true));
            }
        });
        server.addExport(new ExportConfig("plain", "plain", false, Set.of(), 0, Map.of()));
        OpenRsp plain = open(c, "plain", AccessMode.RW).rsp();
        assertFalse(plain.secureDiscard());
        assertEquals(Errno.EOPNOTSUPP, writeNow(c, Io.of(plain.deviceId(), 0, Io.OP_SECURE_ERASE, 0, 4096), empty()));
    }

    /**
     * Linux's rnbd-client (no authenticator ran: no appliance extensions) is never offered
     * secure erase: its SECURE_ERASE path maps a payload the request does not have, and in
     * the rxe guest `blkdiscard -s` on an export offering it never returned (6.1, 6.12, 7.3).
     * A SECURE_ERASE it sends anyway is still carried out.
     */
    @Test
    void linuxsClientIsNotOfferedSecureErase() {
        FakeRtrs.Client linux = rtrs.connectAs("linux1", "", "", false);
        OpenRsp rsp = open(linux, "disk", AccessMode.RW).rsp();
        assertFalse(rsp.secureDiscard(), "no secure_discard for a client without the extensions");
        assertTrue(rsp.maxDiscardSectors() > 0, "discard still offered");
        assertEquals(0, writeNow(linux, Io.of(rsp.deviceId(), 8, Io.OP_SECURE_ERASE, 0, 4096), empty()));
        assertEquals(1, backend.device("disk").secureErases());
    }

    /**
     * As Linux's rnbd_to_bio_flags: flag bits a newer client sets are ignored, an op it adds is
     * answered with an errno (EOPNOTSUPP; Linux WARNs and runs it as a READ), both counted as
     * unknown; the session and the path stay and the next request is served.
     */
    @Test
    void unknownFlagsAreIgnoredAndUnknownOpsAnsweredWithAnErrnoBothCounted() {
        FakeRtrs.Client c = rtrs.connect("s1");
        int dev = openOk(c, "disk", AccessMode.RW);
        byte[] data = new byte[4096];
        Arrays.fill(data, (byte) 0x42);
        assertEquals(0, writeNow(c, new Io(dev, 0, Io.OP_WRITE | Io.F_FUA | 1 << 12 | 1 << 31, 4096, 0),
                ByteBuffer.wrap(data)), "a write with two flag bits of a future protocol");
        assertArrayEquals(data, read(c, dev, 0, 4096));
        assertEquals(1, backend.device("disk").fuaWrites(), "the known flag is honoured");
        assertEquals(Errno.EOPNOTSUPP, writeNow(c, new Io(dev, 0, 6, 4096, 0), empty()), "op 6");
        assertEquals(Errno.EOPNOTSUPP, readNow(c, new Io(dev, 0, 0xff, 4096, 0), ByteBuffer.allocate(4096)), "op 255");
        assertEquals(0, write(c, dev, 4096, data), "the next request is served");
        ExportInfo e = server.exports().get(0);
        assertEquals(3, e.stats().unknown());
        assertEquals(2, e.stats().errors());
        assertEquals(2, e.stats().writes());
    }

    @Test
    void hostileMessagesGetErrorsWhileAnotherClientKeepsWorking() throws Exception {
        FakeRtrs.Client good = rtrs.connect("good");
        int dev = openOk(good, "disk", AccessMode.RW);
        FakeRtrs.Client evil = rtrs.connect("evil");
        Random r = new Random(7);
        byte[][] raws = {
            new byte[0],
            new byte[] {4, 0},
            HexBytes.of("0600 0000"),
            HexBytes.of("0300 0000 0000 0000"),
            Io.of(0, 0, Io.OP_READ, 0, 512).toBuffer().array(),
            java.util.Arrays.copyOf(Io.of(dev, 0, Io.OP_WRITE, 0, 512).toBuffer().array(), 31),
            java.util.Arrays.copyOf(Io.of(dev, 0, Io.OP_WRITE, 0, 512).toBuffer().array(), 40),
            new SessInfoRsp(2).toBuffer().array(),
            new OpenRsp(1, 1, 1, 0, 0, 0, 0, 512, 512, 1, false, 0).toBuffer().array(),
        };
        byte[] unterminated = new Open(AccessMode.RW, "disk").toBuffer().array();
        java.util.Arrays.fill(unterminated, 6, 6 + 255, (byte) 'x');
        byte[] badMode = new Open(AccessMode.RW, "disk").toBuffer().array();
        badMode[4] = 9;

        java.util.List<CompletableFuture<Integer>> evilCalls = new java.util.ArrayList<>();
        java.util.List<CompletableFuture<Integer>> goodCalls = new java.util.ArrayList<>();
        byte[] expected = new byte[SIZE];
        for (int round = 0; round < 20; round++) {
            for (byte[] raw : raws) {
                evilCalls.add(Wire.write(evil, ByteBuffer.wrap(raw), ByteBuffer.allocate(512)));
                evilCalls.add(Wire.read(evil, ByteBuffer.wrap(raw), ByteBuffer.allocate(512)));
            }
            evilCalls.add(Wire.read(evil, ByteBuffer.wrap(unterminated), ByteBuffer.allocate(OpenRsp.SIZE)));
            evilCalls.add(Wire.read(evil, ByteBuffer.wrap(badMode), ByteBuffer.allocate(OpenRsp.SIZE)));
            evilCalls.add(Wire.read(evil, new Open(AccessMode.RO, "disk").toBuffer(), ByteBuffer.allocate(10)));
            byte[] garbage = new byte[r.nextInt(64) + 1];
            r.nextBytes(garbage);
            evilCalls.add(Wire.write(evil, ByteBuffer.wrap(garbage), empty()));

            byte[] block = new byte[4096];
            r.nextBytes(block);
            int off = round * 4096;
            System.arraycopy(block, 0, expected, off, 4096);
            goodCalls.add(Wire.write(good, Io.of(dev, off / 512, Io.OP_WRITE, 0, 4096).toBuffer(), ByteBuffer.wrap(block)));
        }
        for (CompletableFuture<Integer> f : evilCalls) {
            assertNotEquals(0, get(f), "a hostile message was accepted");
        }
        for (CompletableFuture<Integer> f : goodCalls) {
            assertEquals(0, get(f));
        }
        assertArrayEquals(java.util.Arrays.copyOf(expected, 20 * 4096), concatReads(good, dev, 20 * 4096));
        assertEquals(1, server.exports().get(0).openers().size(), "the hostile session opened nothing");
    }

    private static byte[] concatReads(FakeRtrs.Client c, int dev, int len) {
        byte[] out = new byte[len];
        for (int off = 0; off < len; off += MAX_IO) {
            int n = Math.min(MAX_IO, len - off);
            System.arraycopy(read(c, dev, off, n), 0, out, off, n);
        }
        return out;
    }

    /**
     * A backend that holds a write beyond backend.timeout.ms (fake time): the request is
     * counted and reported as the export's last error, but not answered until the backend
     * gives it back. Its data is the RTRS chunk: an early answer (ETIMEDOUT, as this server
     * once gave) frees the chunk for the client's next request while the backend may still
     * write from it, so the next request's bytes could land at this one's offset.
     */
    @Test
    void aSlowBackendIsReportedButAnsweredOnlyWhenItGivesTheRequestBack() {
        server.backendTimeoutMs(2000);
        FakeRtrs.Client c = rtrs.connect("s1");
        int dev = openOk(c, "disk", AccessMode.RW);
        FakeBlockDevice d = backend.device("disk");
        d.hold();
        int timersBefore = scheduler.pending();
        byte[] data = new byte[512];
        data[0] = 7;
        CompletableFuture<Integer> slow = Wire.write(c, Io.of(dev, 0, Io.OP_WRITE, 0, 512).toBuffer(),
                ByteBuffer.wrap(data));
        // The deadline is armed just after the backend took the request (a request the
        // backend completes at once never arms one), so wait for both before moving time.
        Await.until("write reached the backend, deadline armed",
                () -> d.heldCount() == 1 && scheduler.pending() > timersBefore);
        scheduler.advance(Duration.ofMillis(1999));
        assertEquals(0, server.exports().get(0).stats().timeouts(), "not slow before backend.timeout.ms");
        scheduler.advance(Duration.ofMillis(1));
        assertEquals(1, server.exports().get(0).stats().timeouts());
        assertTrue(server.exports().get(0).lastError().contains("held a request beyond backend.timeout.ms (2000 ms)"),
                server.exports().get(0).lastError());
        scheduler.advance(Duration.ofMinutes(10));
        assertFalse(slow.isDone(), "answered while the backend still holds the request's chunk");

        d.release();
        assertEquals(0, get(slow), "answered with the backend's own result once it gave the request back");
        Await.until("the export's last error cleared", () -> server.exports().get(0).lastError().isEmpty());
        assertEquals(1, server.exports().get(0).stats().timeouts(), "counted once");
        assertArrayEquals(data, read(c, dev, 0, 512));
        byte[] newer = new byte[512];
        newer[0] = 42;
        assertEquals(0, write(c, dev, 0, newer), "writes go on");
        assertArrayEquals(newer, read(c, dev, 0, 512));
    }

    @Test
    void backendGoneFailsIoAtOnceWithoutWait() {
        FakeRtrs.Client c = rtrs.connect("s1");
        int dev = openOk(c, "disk", AccessMode.RW);
        byte[] data = new byte[4096];
        new Random(3).nextBytes(data);
        assertEquals(0, write(c, dev, 0, data));
        FakeBlockDevice old = backend.device("disk");

        server.backendRemoved("memory", backend);
        ExportInfo info = server.exports().get(0);
        assertEquals(ExportState.OFFLINE, info.state());
        assertFalse(info.lastError().isEmpty());
        assertTrue(old.isClosed());
        assertTrue(old.flushes() > 0, "acknowledged writes flushed before close");
        assertEquals(Errno.ENODEV, write(c, dev, 0, data));
        assertEquals(Errno.ENODEV, readNow(c, Io.of(dev, 0, Io.OP_READ, 0, 4096), ByteBuffer.allocate(4096)));
        assertEquals(0, open(rtrs.connect("s2"), "disk", AccessMode.RO).errno(), "OPEN while offline uses known geometry");

        server.backendAdded("memory", backend);
        assertEquals(ExportState.ONLINE, server.exports().get(0).state());
        assertArrayEquals(data, read(c, dev, 0, 4096), "nothing acknowledged was lost");
    }

    @Test
    void backendGoneIoWaitsThenProceedsOrTimesOut() {
        server.addExport(export("patient", false, Set.of(), 5000));
        FakeRtrs.Client c = rtrs.connect("s1");
        int dev = openOk(c, "patient", AccessMode.RW);
        byte[] data = new byte[4096];
        new Random(4).nextBytes(data);

        server.backendRemoved("memory", backend);
        CompletableFuture<Integer> w = Wire.write(c, Io.of(dev, 0, Io.OP_WRITE, 0, 4096).toBuffer(), ByteBuffer.wrap(data));
        Await.until("write parked", () -> stats("patient").inflight() == 1);
        scheduler.advance(Duration.ofMillis(4999));
        assertFalse(w.isDone());
        server.backendAdded("memory", backend);
        assertEquals(0, get(w));
        assertArrayEquals(data, read(c, dev, 0, 4096));

        server.backendRemoved("memory", backend);
        CompletableFuture<Integer> r = Wire.read(c, Io.of(dev, 0, Io.OP_READ, 0, 4096).toBuffer(), ByteBuffer.allocate(4096));
        Await.until("read parked", () -> stats("patient").inflight() == 1);
        try (LogCapture log = LogCapture.start()) {
            scheduler.advance(Duration.ofMillis(5000));
            assertEquals(Errno.ENODEV, get(r));
            assertTrue(log.contains("export patient: IO waited offline.wait.ms (5000 ms) for its backend (backend "
                    + "'memory' went away); failing it with ENODEV"), log.text());
        }
        assertEquals(0, stats("patient").inflight());
    }

    private io.rnbd.rnbd.api.BlockIoStats stats(String export) {
        return server.exports().stream().filter(e -> e.name().equals(export)).findFirst().orElseThrow().stats();
    }

    @Test
    void removingAnExportFailsWaitersAndClosesOpeners() {
        server.addExport(export("patient", false, Set.of(), 5000));
        FakeRtrs.Client c = rtrs.connect("s1");
        int dev = openOk(c, "patient", AccessMode.RW);
        server.backendRemoved("memory", backend);
        CompletableFuture<Integer> w = Wire.write(c, Io.of(dev, 0, Io.OP_WRITE, 0, 512).toBuffer(), ByteBuffer.allocate(512));
        Await.until("write parked", () -> stats("patient").inflight() == 1);
        server.removeExport("patient");
        assertEquals(Errno.ENODEV, get(w));
        assertEquals(Errno.ENXIO, write(c, dev, 0, new byte[512]));
        assertEquals(0, scheduler.pending(), "timer cancelled");
    }

    /**
     * A client may have two OPENs of one device out at once (attach racing the handshake),
     * and with more than one server IO thread they are handled at the same time: the second
     * must answer the device the first opened, never EBUSY from the export's one writer.
     */
    @Test
    void concurrentReopensOfOneDeviceAnswerTheSameDevice() throws Exception {
        for (int round = 0; round < 300; round++) {
            FakeRtrs.Client c = rtrs.connect("racer" + round);
            ByteBuffer a = ByteBuffer.allocate(OpenRsp.SIZE);
            ByteBuffer b = ByteBuffer.allocate(OpenRsp.SIZE);
            CompletableFuture<Integer> first = Wire.read(c, new Open(AccessMode.RW, "disk").toBuffer(), a);
            CompletableFuture<Integer> second = Wire.read(c, new Open(AccessMode.RW, "disk").toBuffer(), b);
            int round0 = round;
            assertEquals(0, get(first), () -> "round " + round0);
            assertEquals(0, get(second), () -> "round " + round0 + ": the second OPEN");
            int id = OpenRsp.decode(a).deviceId();
            assertEquals(id, OpenRsp.decode(b).deviceId(), "one device, answered twice");
            assertEquals(0, writeNow(c, new Close(id), empty()));
            c.close();
        }
    }

    private ExportInfo info(String export) {
        return server.exports().stream().filter(e -> e.name().equals(export)).findFirst().orElseThrow();
    }

    /**
     * Issue 20 item 4: a file export whose file is missing stays offline; when the file
     * appears it comes online on the next retry, without a configuration change. The failure
     * is logged once, not every retry.
     */
    @Test
    void anExportWhoseBackendFailedToOpenIsRetriedUntilItOpens() throws Exception {
        backend.missing("late");
        try (LogCapture log = LogCapture.start()) {
            server.addExport(export("late", false, Set.of(), 0));
            assertEquals(ExportState.OFFLINE, info("late").state());
            assertEquals("open failed: late: no such file", info("late").lastError());
            scheduler.advance(Duration.ofMillis(RnbdServer.DEFAULT_OPEN_RETRY_MS * 3));
            assertEquals(ExportState.OFFLINE, info("late").state(), "still missing");
            assertEquals(1, log.lines().stream().filter(l -> l.contains("failed to open")).count(), log.text());

            backend.appear("late");
            scheduler.advance(Duration.ofMillis(RnbdServer.DEFAULT_OPEN_RETRY_MS - 1));
            assertEquals(ExportState.OFFLINE, info("late").state(), "not before the retry is due");
            scheduler.advance(Duration.ofMillis(1));
            assertEquals(ExportState.ONLINE, info("late").state());
            assertEquals("", info("late").lastError());
        }
        openOk(rtrs.connect("s1"), "late", AccessMode.RW);
        assertEquals(0, scheduler.pending(), "nothing left to retry: no timer");
    }

    @Test
    void openRetryZeroRetriesOnlyOnABackendChange() {
        server.openRetryMs(0);
        backend.missing("late");
        server.addExport(export("late", false, Set.of(), 0));
        backend.appear("late");
        scheduler.advance(Duration.ofMinutes(1));
        assertEquals(ExportState.OFFLINE, info("late").state());
        server.backendRemoved("memory", backend);
        server.backendAdded("memory", backend);
        assertEquals(ExportState.ONLINE, info("late").state());
        assertThrows(IllegalArgumentException.class, () -> server.openRetryMs(-1));
    }

    /** Exports on the real memory backend, whose devices resize. */
    private io.rnbd.rnbd.backend.memory.internal.MemoryBackend resizable() {
        io.rnbd.rnbd.backend.memory.internal.MemoryBackend mem = new io.rnbd.rnbd.backend.memory.internal.MemoryBackend();
        server.backendAdded("mem", mem);
        server.addExport(new ExportConfig("grow", "mem", false, Set.of(), 0, Map.of("size", "1m")));
        return mem;
    }

    /**
     * Issue 20 item 7, server side: a resize reaches what the next OPEN answers (as Linux's
     * rnbd-server answers a re-OPEN with the device's size now) and the bound IO is checked
     * against; the client's device id stays.
     */
    @Test
    void aGrownExportIsWhatTheNextOpenAnswers() {
        resizable();
        FakeRtrs.Client c = rtrs.connect("s1");
        OpenRsp before = open(c, "grow", AccessMode.RW).rsp();
        assertEquals((1 << 20) / 512, before.nsectors());
        assertEquals(Errno.EINVAL, write(c, before.deviceId(), 1 << 20, new byte[512]), "beyond the end");

        assertEquals(4L << 20, assertDoesNotThrowResize("grow", 4L << 20));
        assertEquals(4L << 20, info("grow").size());
        OpenRsp after = open(c, "grow", AccessMode.RW).rsp();
        assertEquals((4L << 20) / 512, after.nsectors());
        assertEquals(before.deviceId(), after.deviceId(), "the same device, only bigger");
        byte[] data = new byte[4096];
        new Random(7).nextBytes(data);
        assertEquals(0, write(c, after.deviceId(), (4L << 20) - 4096, data));
        assertArrayEquals(data, read(c, after.deviceId(), (4L << 20) - 4096, 4096));
    }

    private long assertDoesNotThrowResize(String export, long bytes) {
        try {
            return server.resizeExport(export, bytes);
        } catch (java.io.IOException e) {
            throw new AssertionError("resize of " + export + " to " + bytes + ": " + e.getMessage(), e);
        }
    }

    /** The device grew behind the server's back (an rbd resize, a truncate -s): the next OPEN says so. */
    @Test
    void aSizeChangeBehindTheServersBackReachesTheNextOpen() throws Exception {
        resizable();
        FakeRtrs.Client c = rtrs.connect("s1");
        openOk(c, "grow", AccessMode.RW);
        server.removeExport("grow"); // only to get at the device: reopen it through a fresh export
        MemoryDeviceHolder holder = new MemoryDeviceHolder();
        server.backendAdded("held", holder);
        server.addExport(new ExportConfig("held", "held", false, Set.of(), 0, Map.of()));
        int dev = openOk(c, "held", AccessMode.RW);
        holder.device.resize(2L << 20).get();
        assertEquals(2L << 20, info("held").size(), "told by the device's size watch");
        assertEquals((2L << 20) / 512, open(c, "held", AccessMode.RW).rsp().nsectors());
        assertEquals(0, write(c, dev, (2L << 20) - 512, new byte[512]));
    }

    /** A backend whose one device the test can resize from outside, as Ceph's CLI would. */
    private static final class MemoryDeviceHolder implements io.rnbd.rnbd.api.BlockBackend {
        private final io.rnbd.rnbd.backend.memory.internal.MemoryBackend mem =
                new io.rnbd.rnbd.backend.memory.internal.MemoryBackend();
        io.rnbd.rnbd.api.BlockDevice device;

        @Override
        public String type() {
            return "held";
        }

        @Override
        public io.rnbd.rnbd.api.BlockDevice open(Map<String, String> params, boolean readOnly)
                throws java.io.IOException {
            device = mem.open(Map.of("size", "1m"), readOnly);
            return device;
        }
    }

    /** Shrinking below what a client mapped is refused, naming who; once unmapped it works. */
    @Test
    void shrinkingAnOpenExportIsRefused() throws Exception {
        resizable();
        FakeRtrs.Client c = rtrs.connect("s1");
        int dev = openOk(c, "grow", AccessMode.RW);
        BlockIoException busy = assertThrows(BlockIoException.class, () -> server.resizeExport("grow", 512 << 10));
        assertEquals(Errno.EBUSY, busy.errno());
        assertEquals("EBUSY: export grow is open by session s1 with 1048576 bytes mapped: shrinking to 524288 would fail "
                + "their IO beyond it (unmap them first)", busy.getMessage());
        assertEquals(1 << 20, info("grow").size());
        assertEquals(0, write(c, dev, (1 << 20) - 512, new byte[512]), "the tail still works");

        assertEquals(0, writeNow(c, new Close(dev), empty()));
        assertEquals(512 << 10, server.resizeExport("grow", 512 << 10));
        assertEquals((512 << 10) / 512, open(c, "grow", AccessMode.RW).rsp().nsectors());
    }

    @Test
    void resizeRefusesBadSizesUnknownAndOfflineExports() {
        resizable();
        for (long bad : new long[] {0, 513, -512, 9223372036854775807L}) {
            BlockIoException e = assertThrows(BlockIoException.class, () -> server.resizeExport("grow", bad));
            assertEquals(Errno.EINVAL, e.errno(), "size " + bad);
        }
        assertEquals(Errno.ENOENT, assertThrows(BlockIoException.class,
                () -> server.resizeExport("nope", 1 << 20)).errno());
        assertEquals(Errno.EOPNOTSUPP, assertThrows(BlockIoException.class,
                () -> server.resizeExport("disk", 2 << 20)).errno(), "the test device cannot resize");
        backend.missing("late");
        server.addExport(export("late", false, Set.of(), 0));
        assertEquals(Errno.ENODEV, assertThrows(BlockIoException.class,
                () -> server.resizeExport("late", 2 << 20)).errno());
    }

    @Test
    void validateExportAsksTheCurrentBackendOfTheType() throws Exception {
        resizable();
        java.io.IOException e = assertThrows(java.io.IOException.class,
                () -> server.validateExport("mem", Map.of("size", "513"), false));
        assertTrue(e.getMessage().contains("positive multiple of 512"), e.getMessage());
        server.validateExport("mem", Map.of("size", "2m"), false);
        server.validateExport("absent", Map.of("size", "513"), false); // no backend: nothing to ask
    }

    @Test
    void forceCloseAndSessionClose() throws Exception {
        FakeRtrs.Client c = rtrs.connect("s1");
        int dev = openOk(c, "disk", AccessMode.RW);
        server.forceClose("disk", "s1");
        assertEquals(Errno.ENXIO, write(c, dev, 0, new byte[512]));
        assertTrue(server.exports().get(0).openers().isEmpty());
        BlockIoException e = assertThrows(BlockIoException.class, () -> server.forceClose("disk", "s1"));
        assertEquals(Errno.ENOENT, e.errno());
        assertEquals(Errno.ENOENT, assertThrows(BlockIoException.class, () -> server.forceClose("x", "s1")).errno());

        openOk(c, "disk", AccessMode.RW);
        c.disconnect();
        Await.until("session released", () -> server.exports().get(0).openers().isEmpty());
        openOk(rtrs.connect("s2"), "disk", AccessMode.RW);
    }

    /**
     * A request of a session whose close was announced already (it waited for this server
     * through an RNBD restart, or raced the close on another thread) opens nothing: an open
     * made for the dead session would hold the export's one writer forever, and the client's
     * next session would be refused the export with EBUSY.
     */
    @Test
    void anOpenOfASessionClosedAlreadyHoldsNothing() {
        ClosableSession dead = new ClosableSession("s1");
        server.onSessionConnected(dead);
        dead.closed = true;
        server.onSessionClosed(dead);

        ByteBuffer rsp = ByteBuffer.allocate(OpenRsp.SIZE);
        CompletableFuture<Integer> answer = new CompletableFuture<>();
        server.onRequest(new OneRequest(dead, new Open(AccessMode.RW, "disk").toBuffer(), rsp, answer));
        assertEquals(Errno.ECONNRESET, answer.join());
        assertTrue(server.exports().get(0).openers().isEmpty(), () -> "held for a closed session: "
                + server.exports().get(0).openers());

        // the same client's next session gets the export for writing
        openOk(rtrs.connect("s1"), "disk", AccessMode.RW);
    }

    /** The close is announced after the open went through: the open is let go of. */
    @Test
    void aCloseAnnouncedAfterTheOpenLetsGoOfIt() {
        ClosableSession s = new ClosableSession("s1");
        ByteBuffer rsp = ByteBuffer.allocate(OpenRsp.SIZE);
        CompletableFuture<Integer> answer = new CompletableFuture<>();
        server.onRequest(new OneRequest(s, new Open(AccessMode.RW, "disk").toBuffer(), rsp, answer));
        assertEquals(0, answer.join());
        assertEquals(1, server.exports().get(0).openers().size());
        s.closed = true;
        server.onSessionClosed(s);
        assertTrue(server.exports().get(0).openers().isEmpty());
    }

    private static final class ClosableSession implements io.rnbd.rtrs.api.RtrsServerSession {
        private final String name;
        private final java.util.UUID uuid = java.util.UUID.randomUUID();
        volatile boolean closed;

        ClosableSession(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String hostId() {
            return "";
        }

        @Override
        public java.util.UUID uuid() {
            return uuid;
        }

        @Override
        public int pathCount() {
            return closed ? 0 : 1;
        }

        @Override
        public boolean closed() {
            return closed;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    private record OneRequest(io.rnbd.rtrs.api.RtrsServerSession session, ByteBuffer userHeader, ByteBuffer data,
                              CompletableFuture<Integer> answer) implements io.rnbd.rtrs.api.RtrsServerRequest {
        @Override
        public boolean isWrite() {
            return false;
        }

        @Override
        public void complete(int errno) {
            assertTrue(answer.complete(errno), "answered twice");
        }
    }

    @Test
    void statsCountAndReset() throws Exception {
        FakeRtrs.Client c = rtrs.connect("s1");
        int dev = openOk(c, "disk", AccessMode.RW);
        write(c, dev, 0, new byte[8192]);
        read(c, dev, 0, 4096);
        read(c, dev, 0, 512);
        write(c, dev, SIZE, new byte[512]);
        var s = server.exports().get(0).stats();
        assertEquals(1, s.writes());
        assertEquals(8192, s.writeBytes());
        assertEquals(2, s.reads());
        assertEquals(4608, s.readBytes());
        assertEquals(1, s.errors());
        // the refused write never reached the backend: three latencies, one per IO that did
        assertEquals(3, s.latency().count());
        server.resetStats("disk");
        assertEquals(io.rnbd.rnbd.api.BlockIoStats.ZERO, server.exports().get(0).stats());
    }

    @Test
    void exportConfigFromProperties() {
        Map<String, Object> p = new HashMap<>();
        p.put("name", " disk1 ");
        p.put("backend", "file");
        p.put("read.only", "true");
        p.put("allowed.sessions", "a, b,,c");
        p.put("allowed.hosts", "host-a ,*");
        p.put("trust.claimed.identity", "true");
        p.put("offline.wait.ms", "2500");
        p.put("backend.path", "/x");
        p.put("backend.size", "1g");
        p.put("service.pid", "ignored");
        ExportConfig c = ExportConfig.fromProperties(p);
        assertEquals("disk1", c.name());
        assertEquals("file", c.backend());
        assertTrue(c.readOnly());
        assertEquals(Set.of("a", "b", "c"), c.allowedSessions());
        assertEquals(Set.of("host-a", "*"), c.allowedHosts());
        assertTrue(c.trustClaimedIdentity());
        assertFalse(ExportConfig.fromProperties(Map.of("name", "d", "backend", "m")).trustClaimedIdentity(),
                "claims are not trusted unless configured");
        assertEquals(2500, c.offlineWaitMs());
        assertEquals(20_000, ExportConfig.fromProperties(Map.of("name", "d", "backend", "m")).offlineWaitMs(),
                "IO waits 20 s for a missing backend unless configured otherwise");
        assertEquals(Map.of("path", "/x", "size", "1g"), c.backendParams());

        assertThrows(IllegalArgumentException.class, () -> ExportConfig.fromProperties(Map.of("backend", "memory")));
        assertThrows(IllegalArgumentException.class, () -> ExportConfig.fromProperties(Map.of("name", "d")));
        assertThrows(IllegalArgumentException.class,
                () -> ExportConfig.fromProperties(Map.of("name", "d", "backend", "m", "offline.wait.ms", "-1")));
        assertThrows(IllegalArgumentException.class,
                () -> ExportConfig.fromProperties(Map.of("name", "d", "backend", "m", "offline.wait.ms", "soon")));
        assertThrows(IllegalStateException.class, () -> server.addExport(export("disk", false, Set.of(), 0)));
    }

    /**
     * A server just started (open grace): an OPEN of an export whose configuration has not
     * arrived yet waits and is answered once the export is added, as after a restart of the
     * RNBD server bundle, where the clients' re-OPENs can overtake the exports; an OPEN of an
     * export that never comes is answered ENOENT when the grace is up, and after that at once.
     * Without the grace the first OPEN is answered ENOENT and the client fails its device.
     */
    @Test
    void openDuringTheGraceWaitsForTheExportToArrive() {
        RnbdServer fresh = new RnbdServer(scheduler);
        fresh.backendAdded("memory", backend);
        fresh.openGraceMs(10_000);
        try (FakeRtrs wire = new FakeRtrs(fresh)) {
            FakeRtrs.Client c = wire.connect("s1");
            ByteBuffer early = ByteBuffer.allocate(OpenRsp.SIZE);
            CompletableFuture<Integer> arriving = Wire.read(c, new Open(AccessMode.RW, "late").toBuffer(), early);
            CompletableFuture<Integer> never = Wire.read(c, new Open(AccessMode.RO, "never").toBuffer(),
                    ByteBuffer.allocate(OpenRsp.SIZE));
            // both OPENs reached the server (delivery is on a thread of its own) and were parked
            Await.until("both OPENs parked", () -> fresh.parkedOpens() == 2);
            assertFalse(arriving.isDone(), "answered before the export arrived: " + arriving.getNow(null));
            assertFalse(never.isDone(), "answered ENOENT during the grace");

            fresh.addExport(export("late", false, Set.of(), 0));
            int rc = get(arriving);
            assertEquals(0, rc, "OPEN of the export that arrived");
            assertEquals(SIZE / 512, OpenRsp.decode(early).nsectors());
            assertFalse(never.isDone(), "an unrelated export arrived, \"never\" still waits");

            scheduler.advance(Duration.ofMillis(9_999));
            assertFalse(never.isDone(), "answered before the grace was up");
            scheduler.advance(Duration.ofMillis(1));
            assertEquals(Errno.ENOENT, get(never), "the grace is up: no such export");
            assertEquals(Errno.ENOENT, open(c, "never", AccessMode.RO).errno(), "after the grace: at once");
        } catch (Exception e) {
            throw new AssertionError(e);
        } finally {
            fresh.close();
        }
    }

    @Test
    void openGraceRefusesNegativeAndClosingAnswersParkedOpens() throws Exception {
        assertThrows(IllegalArgumentException.class, () -> server.openGraceMs(-1));
        RnbdServer fresh = new RnbdServer(scheduler);
        fresh.openGraceMs(10_000);
        try (FakeRtrs wire = new FakeRtrs(fresh)) {
            CompletableFuture<Integer> parked = Wire.read(wire.connect("s1"),
                    new Open(AccessMode.RO, "late").toBuffer(), ByteBuffer.allocate(OpenRsp.SIZE));
            Await.until("OPEN parked", () -> fresh.parkedOpens() == 1);
            assertFalse(parked.isDone());
            // a server closing within its grace leaves no OPEN unanswered
            fresh.close();
            assertEquals(Errno.ENOENT, get(parked));
        }
    }
}

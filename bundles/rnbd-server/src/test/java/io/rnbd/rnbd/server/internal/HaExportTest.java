package io.rnbd.rnbd.server.internal;

import static io.rnbd.rnbd.server.internal.Wire.empty;
import static io.rnbd.rnbd.server.internal.Wire.readNow;
import static io.rnbd.rnbd.server.internal.Wire.writeNow;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.RnbdServerAdmin.HaInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin.Role;
import io.rnbd.rnbd.proto.Io;
import io.rnbd.rnbd.proto.Open;
import io.rnbd.rnbd.proto.OpenRsp;
import io.rnbd.rnbd.proto.SessInfo;
import io.rnbd.rnbd.proto.SessInfoRsp;
import io.rnbd.testkit.Await;
import io.rnbd.testkit.FakeScheduler;
import io.rnbd.testkit.block.FakeSharedBackend;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two servers exporting one storage ({@code ha = true}) over the in-memory stand-in of RBD's lock
 * and blocklist (held to RBD's rules by SharedDeviceContractTest): who may change it in each
 * role, what a Linux host and an appliance client each get from a standby, the hold-off, and a
 * fenced server finding out and coming back as a standby.
 */
class HaExportTest {
    private static final int SIZE = 1 << 20;
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final AtomicLong wallClock = new AtomicLong(1_000_000_000L);
    private final FakeSharedBackend.Cluster cluster = new FakeSharedBackend.Cluster(wallClock::get);
    private final List<Server> servers = new ArrayList<>();

    /** One appliance server: its RNBD server, scheduler (fake time) and RTRS clients. */
    private final class Server {
        final String name;
        final FakeScheduler scheduler = new FakeScheduler();
        final RnbdServer rnbd = new RnbdServer(scheduler);
        final FakeRtrs rtrs = new FakeRtrs(rnbd);

        Server(String name) {
            this.name = name;
            rnbd.serverName(name);
            rnbd.haWallClock(wallClock::get);
            rnbd.backendAdded("shared", new FakeSharedBackend(cluster, "shared"));
            rnbd.addExport(new ExportConfig("vol", "shared", false, Set.of(), 0, Map.of("image", "vol", "size",
                    Integer.toString(SIZE))).withHa(true));
            servers.add(this);
        }

        HaInfo ha() {
            return rnbd.exports().get(0).ha();
        }

        /** A session of an appliance client (SESS_INFO with EXT_HA) or of a Linux host. */
        Session session(String name, boolean appliance) {
            FakeRtrs.Client c = rtrs.connect(name);
            ByteBuffer rsp = ByteBuffer.allocate(SessInfoRsp.SIZE);
            assertEquals(0, readNow(c, new SessInfo(2, appliance), rsp));
            try {
                assertEquals(appliance, SessInfoRsp.decode(rsp).ha(), "the server answers the extension only when asked");
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            return new Session(c, appliance);
        }
    }

    /** @param leg the client maps over several servers (OPEN's F_LEG; an appliance client's HA mapping) */
    private record Session(FakeRtrs.Client c, boolean leg) {
        OpenRsp open(boolean takeover) {
            OpenRsp r = tryOpen(takeover);
            if (r == null) {
                throw new AssertionError("OPEN refused: " + Errno.name(lastErrno()));
            }
            return r;
        }

        /** The OPEN's answer, or null when refused (see {@link #lastErrno}). */
        OpenRsp tryOpen(boolean takeover) {
            ByteBuffer dst = ByteBuffer.allocate(OpenRsp.SIZE);
            int errno = readNow(c, new Open(AccessMode.RW, "vol", (takeover ? Open.F_TAKEOVER : 0)
                    | (leg ? Open.F_LEG : 0)), dst);
            LAST.set(errno);
            if (errno != 0) {
                return null;
            }
            try {
                return OpenRsp.decode(dst);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }

        int write(int id, long offset, byte[] data) {
            return writeNow(c, Io.of(id, offset / 512, Io.OP_WRITE, 0, data.length), ByteBuffer.wrap(data));
        }

        int read(int id, long offset, byte[] into) {
            return readNow(c, Io.of(id, offset / 512, Io.OP_READ, 0, into.length), ByteBuffer.wrap(into));
        }

        int flush(int id) {
            return writeNow(c, Io.of(id, 0, Io.OP_FLUSH, 0, 0), empty());
        }
    }

    private static final ThreadLocal<Integer> LAST = ThreadLocal.withInitial(() -> 0);

    private static int lastErrno() {
        return LAST.get();
    }

    private Server a;
    private Server b;

    @BeforeEach
    void twoServers() {
        a = new Server("A");
        b = new Server("B");
    }

    @AfterEach
    void stop() throws Exception {
        for (Server s : servers) {
            s.rtrs.close();
            assertEquals(0, s.rtrs.violations(), "requests answered twice");
            s.rnbd.close();
        }
    }

    private static <T> T await(java.util.function.Supplier<T> value, java.util.function.Predicate<T> ok, String what) {
        Await.until(() -> what + ": " + value.get(), () -> ok.test(value.get()), WAIT);
        return value.get();
    }

    private static byte[] pattern(long seed, int len) {
        byte[] b = new byte[len];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void bothStartAsStandbysAndAnApplianceClientsTakeoverOpenMakesOneActive() {
        assertEquals(Role.STANDBY, await(() -> a.ha().role(), r -> r == Role.STANDBY, "A's role"));
        assertEquals(Role.STANDBY, await(() -> b.ha().role(), r -> r == Role.STANDBY, "B's role"));
        Session ca = a.session("c1", true);
        OpenRsp plain = ca.open(false);
        assertEquals(OpenRsp.HA_EXPORT, plain.haFlags(), "a standby answers HA_EXPORT without HA_ACTIVE");

        OpenRsp active = ca.open(true);
        assertEquals(OpenRsp.HA_EXPORT | OpenRsp.HA_ACTIVE, active.haFlags());
        assertEquals(1, active.generation());
        assertEquals(plain.deviceId(), active.deviceId(), "a re-OPEN answers the same device");
        assertEquals(Role.ACTIVE, a.ha().role());
        assertEquals("A", a.ha().activeServer());
        assertEquals(0, a.ha().takeovers(), "nobody held it: not a takeover");
        assertEquals(OpenRsp.HA_EXPORT, b.session("c1", true).open(false).haFlags());
    }

    @Test
    void aStandbyServesALinuxHostsReadsAndFlushesWithoutMovingTheStorage() {
        Session ca = a.session("c1", true);
        int idA = ca.open(true).deviceId();
        byte[] data = pattern(1, 4096);
        assertEquals(0, ca.write(idA, 8192, data));
        String holder = cluster.owner("vol");

        Session linux = b.session("linux-host", false);
        OpenRsp rsp = linux.open(false);
        assertEquals(0, rsp.haFlags(), "a Linux host gets Linux's OPEN_RSP");
        byte[] partitionTable = new byte[4096];
        assertEquals(0, linux.read(rsp.deviceId(), 8192, partitionTable));
        assertArrayEquals(data, partitionTable);
        assertEquals(0, linux.flush(rsp.deviceId()));
        assertEquals(holder, cluster.owner("vol"), "the standby's reads moved the storage");
        assertEquals(Role.STANDBY, b.ha().role());
        assertEquals(Role.ACTIVE, a.ha().role());
    }

    @Test
    void aStandbyAnswersEveryRequestOfAnApplianceClientEnolinkAndChangesNothing() {
        Session ca = a.session("c1", true);
        ca.open(true);
        Session cb = b.session("c1", true);
        int idB = cb.open(false).deviceId();
        byte[] before = Arrays.copyOf(cluster.store("vol"), 4096);
        assertEquals(Errno.ENOLINK, cb.write(idB, 0, pattern(2, 4096)));
        assertEquals(Errno.ENOLINK, cb.read(idB, 0, new byte[4096]));
        assertEquals(Errno.ENOLINK, cb.flush(idB));
        assertArrayEquals(before, Arrays.copyOf(cluster.store("vol"), 4096));
        assertEquals(Role.STANDBY, b.ha().role());
    }

    @Test
    void aLinuxHostsWriteAtTheStandbyTakesOverFencesTheActiveAndLands() {
        Session ca = a.session("c1", true);
        int idA = ca.open(true).deviceId();
        assertEquals(0, ca.write(idA, 0, pattern(3, 4096)));
        wallClock.addAndGet(60_000); // past the hold-off

        Session linux = b.session("linux-host", false);
        int idB = linux.open(false).deviceId();
        byte[] newer = pattern(4, 4096);
        assertEquals(0, linux.write(idB, 0, newer), "the write that moves dm-multipath's IO here");
        assertEquals(Role.ACTIVE, b.ha().role());
        assertEquals(1, b.ha().takeovers());
        assertEquals(2, b.ha().generation());

        assertEquals(Errno.ENOLINK, ca.write(idA, 0, pattern(5, 4096)), "the fenced server's write");
        assertArrayEquals(newer, Arrays.copyOf(cluster.store("vol"), 4096));
        await(() -> a.ha().role(), r -> r == Role.STANDBY, "A back as a standby");
        assertEquals("B", await(() -> a.ha(), h -> h.activeServer().equals("B"), "A's view").activeServer());
    }

    @Test
    void aTakeoverOfAHolderThatTookOverWithinTheHoldoffIsRefusedAndAfterItDone() {
        Session ca = a.session("c1", true);
        ca.open(true);
        Session cb = b.session("c2", true);
        assertEquals(null, cb.tryOpen(true), "a takeover 0 ms after A took over");
        assertEquals(Errno.EBUSY, lastErrno());
        assertEquals(Role.STANDBY, b.ha().role());
        assertEquals(Role.ACTIVE, a.ha().role());

        wallClock.addAndGet(HaSettings.DEFAULT_HOLDOFF_MS - 1);
        assertEquals(null, cb.tryOpen(true), "1 ms before the hold-off ends");
        wallClock.addAndGet(1);
        OpenRsp r = cb.open(true);
        assertEquals(OpenRsp.HA_EXPORT | OpenRsp.HA_ACTIVE, r.haFlags());
        assertEquals(2, r.generation());
    }

    @Test
    void aLinuxWriteRefusedByTheHoldoffIsAnsweredEnolinkSoDmMultipathTriesAnotherPath() {
        a.session("c1", true).open(true);
        Session linux = b.session("linux-host", false);
        int id = linux.open(false).deviceId();
        byte[] before = Arrays.copyOf(cluster.store("vol"), 4096);
        assertEquals(Errno.ENOLINK, linux.write(id, 0, pattern(6, 4096)));
        assertArrayEquals(before, Arrays.copyOf(cluster.store("vol"), 4096));
        assertEquals(Role.STANDBY, b.ha().role());
    }

    @Test
    void anIdleActiveThatWasFencedFindsItByItsProbeAndComesBackAsAStandby() {
        Session ca = a.session("c1", true);
        ca.open(true);
        wallClock.addAndGet(60_000);
        b.session("c2", true).open(true);
        assertEquals(Role.ACTIVE, a.ha().role(), "A has not looked yet");
        a.scheduler.advance(Duration.ofMillis(HaSettings.DEFAULT_PROBE_MS));
        await(() -> a.ha().role(), r -> r == Role.STANDBY, "A after its probe");
        assertEquals(OpenRsp.HA_EXPORT, ca.open(false).haFlags());
        assertNotEquals(cluster.owner("vol"), "", "B holds it");
    }

    @Test
    void aWriteHeldInTheFencedServerNeverLandsAndItsClientIsToldEnolink() throws Exception {
        Session ca = a.session("c1", true);
        int idA = ca.open(true).deviceId();
        FakeSharedBackend.SharedFake devA = cluster.devices().get(0);
        devA.hold(); // A freezes with a write on its way to the storage
        CompletableFuture<Integer> stale = Wire.write(ca.c(), Io.of(idA, 0, Io.OP_WRITE, 0, 4096).toBuffer(),
                ByteBuffer.wrap(pattern(7, 4096)));
        wallClock.addAndGet(60_000);
        Session cb = b.session("c1", true);
        int idB = cb.open(true).deviceId();
        byte[] newer = pattern(8, 4096);
        assertEquals(0, cb.write(idB, 0, newer));
        devA.release();
        assertEquals(Errno.ENOLINK, (int) Wire.get(stale), "the stale write's answer: not done here");
        assertArrayEquals(newer, Arrays.copyOf(cluster.store("vol"), 4096));
        await(() -> a.ha().role(), r -> r == Role.STANDBY, "A after the refused write");
    }

    @Test
    void ioOfALinuxHostArrivingDuringTheTakeoverWaitsForItAndRuns() throws Exception {
        Session ca = a.session("c1", true);
        ca.open(true);
        wallClock.addAndGet(60_000);
        cluster.holdTakeovers();
        Session linux = b.session("linux-host", false);
        int id = linux.open(false).deviceId();
        CompletableFuture<Integer> first = Wire.write(linux.c(), Io.of(id, 0, Io.OP_WRITE, 0, 4096).toBuffer(),
                ByteBuffer.wrap(pattern(9, 4096)));
        await(cluster::takeoversWaiting, n -> n == 1, "B's takeover at the storage");
        assertEquals(Role.TAKING_OVER, b.ha().role());
        byte[] second = pattern(10, 4096);
        CompletableFuture<Integer> read = Wire.read(linux.c(), Io.of(id, 8, Io.OP_READ, 0, 4096).toBuffer(),
                ByteBuffer.allocate(4096));
        CompletableFuture<Integer> write = Wire.write(linux.c(), Io.of(id, 8, Io.OP_WRITE, 0, 4096).toBuffer(),
                ByteBuffer.wrap(second));
        ExportRole role = b.rnbd.export("vol").role();
        await(role::queued, n -> n == 3, "the write that started it, the read and the write queued");
        assertFalse(first.isDone() || read.isDone() || write.isDone(), "nothing answered before the lock is B's");
        cluster.releaseTakeovers();
        assertEquals(0, (int) Wire.get(first));
        assertEquals(0, (int) Wire.get(read));
        assertEquals(0, (int) Wire.get(write));
        assertEquals(Role.ACTIVE, b.ha().role());
        assertArrayEquals(second, Arrays.copyOfRange(cluster.store("vol"), 4096, 8192));
        assertFalse(cluster.owner("vol").isEmpty());
    }
}

package io.rnbd.rnbd.client.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceInfo;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceState;
import io.rnbd.rnbd.api.RnbdServerAdmin.Role;
import io.rnbd.rnbd.server.internal.ExportConfig;
import io.rnbd.rnbd.server.internal.FakeRtrs;
import io.rnbd.rnbd.server.internal.RnbdServer;
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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A device mapped over two servers that export one storage ({@code ha = true}), on the in-memory
 * stand-in of RBD's lock and blocklist: the first takeover, a lost server's requests resent only
 * after the other fenced it, a move another client made found rather than made again, two
 * clients that each lost a different server (the storage changes hands once: no ping-pong), an
 * explicit failback, and the IO timeout when no server is there. Every write is verified.
 */
class HaDeviceTest {
    private static final int SIZE = 1 << 20;
    private static final int BLOCK = 4096;

    private final AtomicLong wallClock = new AtomicLong(1_000_000_000L);
    private final FakeSharedBackend.Cluster cluster = new FakeSharedBackend.Cluster(wallClock::get);
    private final List<AutoCloseable> closing = new ArrayList<>();
    private ScheduledExecutorService timer;
    private Server a;
    private Server b;

    private final class Server {
        final RnbdServer rnbd = new RnbdServer(new FakeScheduler());
        final FakeRtrs rtrs = new FakeRtrs(rnbd);

        Server(String name) {
            rnbd.serverName(name);
            rnbd.haWallClock(wallClock::get);
            rnbd.backendAdded("shared", new FakeSharedBackend(cluster, "shared"));
            rnbd.addExport(new ExportConfig("vol", "shared", false, Set.of(), 0, Map.of("image", "vol", "size",
                    Integer.toString(SIZE))).withHa(true));
        }

        Role role() {
            return rnbd.exports().get(0).ha().role();
        }
    }

    /** A client host: its RNBD client and one session to each server. */
    private final class Client {
        final RnbdClient rnbd = new RnbdClient(DevicePublisher.NONE, timer, 0);
        final FakeRtrs.Client toA;
        final FakeRtrs.Client toB;

        Client(String name) {
            toA = a.rtrs.connect(name + "-a");
            toB = b.rtrs.connect(name + "-b");
            rnbd.sessionAdded(toA);
            rnbd.sessionAdded(toB);
            rnbd.haIoTimeoutMs(20_000);
            closing.add(rnbd);
        }

        RemoteBlockDevice map(String device, AccessMode mode) throws Exception {
            return rnbd.map(device, toA.name() + "," + toB.name(), "vol", mode).get(10, TimeUnit.SECONDS);
        }

        DeviceInfo info(String device) {
            return rnbd.devices().stream().filter(d -> d.name().equals(device)).findFirst().orElseThrow();
        }
    }

    @BeforeEach
    void servers() {
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "ha-test-timer");
            t.setDaemon(true);
            return t;
        });
        a = new Server("A");
        b = new Server("B");
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closing) {
            c.close();
        }
        for (Server s : List.of(a, b)) {
            s.rtrs.close();
            assertEquals(0, s.rtrs.violations(), "requests answered twice");
            s.rnbd.close();
        }
        timer.shutdownNow();
    }

    private static byte[] pattern(long seed) {
        byte[] x = new byte[BLOCK];
        new Random(seed).nextBytes(x);
        return x;
    }

    private static void await(CompletableFuture<?> f) throws Exception {
        try {
            f.get(20, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError("request failed: " + e.getCause(), e.getCause());
        }
    }

    private static byte[] read(RemoteBlockDevice d, long offset) throws Exception {
        ByteBuffer buf = ByteBuffer.allocate(BLOCK);
        await(d.read(offset, buf));
        return buf.array();
    }

    private byte[] stored(long offset) {
        return Arrays.copyOfRange(cluster.store("vol"), (int) offset, (int) offset + BLOCK);
    }

    @Test
    void theFirstServerOfTheMappingTakesTheStorageAndTheDeviceReportsIt() throws Exception {
        Client c = new Client("c1");
        RemoteBlockDevice d = c.map("rnbd0", AccessMode.RW);
        await(d.write(0, ByteBuffer.wrap(pattern(1)), false));
        assertArrayEquals(pattern(1), read(d, 0));
        assertEquals(Role.ACTIVE, a.role());
        assertEquals(Role.STANDBY, b.role());
        DeviceInfo i = c.info("rnbd0");
        assertEquals(DeviceState.MAPPED, i.state());
        assertEquals(List.of("c1-a", "c1-b"), i.ha().sessions());
        assertEquals("c1-a", i.ha().active());
        assertEquals(1, i.ha().generation());
        assertEquals(0, i.ha().takeovers());
        assertEquals("c1-a", i.session());
    }

    /**
     * The active server is lost with writes on their way; every one of them is acknowledged
     * once, after the other server fenced the first, and what the storage holds is exactly the
     * last write of each block, including a stale copy frozen in the first server's storage
     * client that arrives after the takeover.
     */
    @Test
    void aLostServersRequestsAreResentOnlyAfterTheOtherFencedItAndNoStaleWriteLands() throws Exception {
        Client c = new Client("c1");
        RemoteBlockDevice d = c.map("rnbd0", AccessMode.RW);
        wallClock.addAndGet(60_000); // A holds it longer than the hold-off
        FakeSharedBackend.SharedFake storageOfA = cluster.devices().get(0);
        storageOfA.hold(); // A freezes with writes on their way to the storage
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            writes.add(d.write((long) i * BLOCK, ByteBuffer.wrap(pattern(100 + i)), false));
        }
        Await.until("the writes reached A", () -> storageOfA.heldCount() == 8);
        c.toA.disconnect(); // its paths are gone: heartbeats, or kill -9
        for (CompletableFuture<Void> w : writes) {
            await(w);
        }
        storageOfA.release(); // the stale copies arrive after the takeover
        for (int i = 0; i < 8; i++) {
            assertArrayEquals(pattern(100 + i), stored((long) i * BLOCK), "block " + i);
        }
        assertTrue(cluster.isFenced(storageOfA.identity()), "A was fenced before anything was resent");
        assertEquals(Role.ACTIVE, b.role());
        DeviceInfo i = c.info("rnbd0");
        assertEquals("c1-b", i.ha().active());
        assertEquals(1, i.ha().takeovers());
        assertEquals(2, i.ha().generation());
        assertTrue(i.ha().lastStallMs() >= 0 && i.ha().lastStallMs() == i.ha().maxStallMs());
        assertEquals(0, i.stats().errors());
    }

    @Test
    void aMoveAnotherClientMadeIsFoundAndNotMadeAgain() throws Exception {
        Client c1 = new Client("c1");
        RemoteBlockDevice d1 = c1.map("rnbd0", AccessMode.RW);
        await(d1.write(0, ByteBuffer.wrap(pattern(2)), false));
        wallClock.addAndGet(60_000);
        Client c2 = new Client("c2");
        RemoteBlockDevice d2 = c2.map("rnbd0", AccessMode.MIGRATION);
        c2.toA.disconnect(); // c2 loses A and takes the storage to B
        await(d2.write(BLOCK, ByteBuffer.wrap(pattern(3)), false));
        Await.until("B active", () -> b.role() == Role.ACTIVE);
        long generation = cluster.devices().size();

        await(d1.write(0, ByteBuffer.wrap(pattern(4)), false)); // ENOLINK at A, then found B
        assertArrayEquals(pattern(4), stored(0));
        DeviceInfo i = c1.info("rnbd0");
        assertEquals("c1-b", i.ha().active());
        assertEquals(1, i.ha().takeovers(), "IO moved once");
        assertEquals(2, i.ha().generation(), "and no takeover of its own: B's generation");
        assertEquals(Role.ACTIVE, b.role());
        assertTrue(cluster.devices().size() >= generation);
    }

    /**
     * Client 1 loses server A while client 2 loses server B. Client 1 takes the storage to B;
     * client 2, which reaches only A, asks A to take it back and is refused for the hold-off, and
     * its IO waits instead of moving the storage back. When its paths to B return it finds B
     * active. The storage changed hands once; both clients' IO completes.
     */
    @Test
    void twoClientsThatEachLostADifferentServerMoveTheStorageOnceNotBackAndForth() throws Exception {
        Client c1 = new Client("c1");
        RemoteBlockDevice d1 = c1.map("rnbd0", AccessMode.RW);
        Client c2 = new Client("c2");
        RemoteBlockDevice d2 = c2.map("rnbd0", AccessMode.MIGRATION);
        wallClock.addAndGet(60_000);
        c1.toA.disconnect();
        c2.toB.disconnect();
        await(d1.write(0, ByteBuffer.wrap(pattern(5)), false));
        Await.until("B active for client 1", () -> b.role() == Role.ACTIVE);
        CompletableFuture<Void> w2 = d2.write(BLOCK, ByteBuffer.wrap(pattern(6)), false);
        Thread.sleep(1500); // client 2 keeps asking A, which refuses within the hold-off
        assertFalse(w2.isDone(), () -> "client 2's write waits for a server it can reach to be active: " + w2);
        assertEquals(Role.ACTIVE, b.role(), "the storage did not go back to A");
        Await.until("A back as a standby", () -> a.role() == Role.STANDBY);

        c2.toB.reconnect();
        await(w2);
        await(d1.write(2 * BLOCK, ByteBuffer.wrap(pattern(7)), false));
        assertArrayEquals(pattern(5), stored(0));
        assertArrayEquals(pattern(6), stored(BLOCK));
        assertArrayEquals(pattern(7), stored(2 * BLOCK));
        assertEquals(1, c1.info("rnbd0").ha().takeovers());
        assertEquals(1, c2.info("rnbd0").ha().takeovers());
        assertEquals(2, c1.info("rnbd0").ha().generation(), "one takeover in all");
        assertEquals(2, c2.info("rnbd0").ha().generation());
        assertEquals(0, c1.info("rnbd0").stats().errors() + c2.info("rnbd0").stats().errors());
    }

    @Test
    void failbackIsAskedForAndMovesTheStorageToTheFirstSession() throws Exception {
        Client c = new Client("c1");
        RemoteBlockDevice d = c.map("rnbd0", AccessMode.RW);
        wallClock.addAndGet(60_000);
        c.toA.disconnect();
        await(d.write(0, ByteBuffer.wrap(pattern(8)), false));
        assertEquals("c1-b", c.info("rnbd0").ha().active());
        c.toA.reconnect();
        Thread.sleep(300);
        assertEquals("c1-b", c.info("rnbd0").ha().active(), "no failback by itself");

        wallClock.addAndGet(60_000);
        assertEquals("c1-a", c.rnbd.failback("rnbd0", "").get(10, TimeUnit.SECONDS));
        await(d.write(BLOCK, ByteBuffer.wrap(pattern(9)), false));
        assertEquals(Role.ACTIVE, a.role());
        assertArrayEquals(pattern(9), stored(BLOCK));
        assertEquals(2, c.info("rnbd0").ha().takeovers());
        assertEquals(3, c.info("rnbd0").ha().generation());
    }

    @Test
    void withNoServerReachableIoFailsAfterTheTimeoutAndNotBefore() throws Exception {
        Client c = new Client("c1");
        c.rnbd.haIoTimeoutMs(800);
        RemoteBlockDevice d = c.map("rnbd0", AccessMode.RW);
        c.toA.disconnect();
        c.toB.disconnect();
        long t0 = System.nanoTime();
        CompletableFuture<Void> w = d.write(0, ByteBuffer.wrap(pattern(10)), false);
        try {
            w.get(10, TimeUnit.SECONDS);
            throw new AssertionError("a write with no server completed");
        } catch (ExecutionException e) {
            assertEquals(Errno.EIO, BlockIoException.errnoOf(e.getCause()));
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms >= 800, "failed after " + ms + " ms");
        assertEquals(DeviceState.DISCONNECTED, c.info("rnbd0").state());
    }

    @Test
    void aMappingOverSeveralSessionsNeedsTwoDifferentOnesAndWrites() throws Exception {
        Client c = new Client("c1");
        assertEquals(Errno.EINVAL, errno(() -> c.rnbd.map("x", "c1-a,c1-a", "vol", AccessMode.RW)));
        assertEquals(Errno.EINVAL, errno(() -> c.rnbd.map("y", "c1-a,c1-b", "vol", AccessMode.RO)));
        assertNotEquals(0, c.rnbd.devices().size() + 1);
    }

    private interface Call {
        void run() throws Exception;
    }

    private static int errno(Call c) {
        try {
            c.run();
            return 0;
        } catch (Exception e) {
            return BlockIoException.errnoOf(e);
        }
    }
}

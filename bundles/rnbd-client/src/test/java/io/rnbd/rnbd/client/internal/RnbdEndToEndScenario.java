package io.rnbd.rnbd.client.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.DeviceClaim;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceState;
import io.rnbd.rnbd.server.internal.ExportConfig;
import io.rnbd.rnbd.server.internal.RnbdServer;
import io.rnbd.rtrs.api.RtrsClientSession;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.testkit.Await;
import io.rnbd.testkit.block.FakeBackend;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * RNBD client and server end to end, over whatever transport a subclass provides: the
 * in-JVM fake here ({@link FakeTransportEndToEndTest}), the real RTRS stack elsewhere.
 */
public abstract class RnbdEndToEndScenario {
    protected static final long TIMEOUT_S = 30;

    /** Connects client sessions to the server under test. */
    public interface Transport extends AutoCloseable {
        /** A client session named {@code name}, connected or connecting to the server. */
        RtrsClientSession connect(String name) throws Exception;

        @Override
        void close() throws Exception;
    }

    /** Wire {@code server} (as the RTRS server's upper layer) to a transport. */
    protected abstract Transport transport(RtrsServerOps server) throws Exception;

    /** The backend exports sit on; tests needing to park IO skip unless it is a {@link FakeBackend}. */
    protected BlockBackend backend() {
        return new FakeBackend();
    }

    /** Backend parameters of an export (memory backend: size in bytes). */
    protected Map<String, String> backendParams(String export, long size) {
        return Map.of("id", export, "size", Long.toString(size));
    }

    protected static final long SIZE = 8 << 20;

    protected ScheduledExecutorService scheduler;
    protected RnbdServer server;
    protected BlockBackend backend;
    protected Transport transport;
    protected RnbdClient client;
    protected final List<io.rnbd.rnbd.api.RemoteBlockDevice> published = new java.util.concurrent.CopyOnWriteArrayList<>();
    protected final List<io.rnbd.rnbd.api.RemoteBlockDevice> withdrawn = new java.util.concurrent.CopyOnWriteArrayList<>();

    @BeforeEach
    void startScenario() throws Exception {
        scheduler = Executors.newSingleThreadScheduledExecutor();
        server = new RnbdServer(scheduler);
        backend = backend();
        server.backendAdded("memory", backend);
        server.addExport(new ExportConfig("disk", "memory", false, Set.of(), 0, backendParams("disk", SIZE)));
        server.addExport(new ExportConfig("ro-disk", "memory", true, Set.of(), 0, backendParams("ro-disk", SIZE)));
        transport = transport(server);
        client = new RnbdClient(new DevicePublisher() {
            @Override
            public void publish(io.rnbd.rnbd.api.RemoteBlockDevice device) {
                published.add(device);
            }

            @Override
            public void withdraw(io.rnbd.rnbd.api.RemoteBlockDevice device) {
                withdrawn.add(device);
            }
        });
        client.sessionAdded(transport.connect("s1"));
    }

    @AfterEach
    void stopScenario() throws Exception {
        client.close();
        transport.close();
        server.close();
        scheduler.shutdownNow();
        assertTrue(scheduler.awaitTermination(10, TimeUnit.SECONDS));
    }

    protected static <T> T await(CompletableFuture<T> f) throws Exception {
        try {
            return f.get(TIMEOUT_S, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception x) {
                throw x;
            }
            throw e;
        }
    }

    protected static int errnoOf(CompletableFuture<?> f) throws InterruptedException, TimeoutException {
        try {
            f.get(TIMEOUT_S, TimeUnit.SECONDS);
            return 0;
        } catch (ExecutionException e) {
            return BlockIoException.errnoOf(e.getCause());
        }
    }

    protected RemoteBlockDevice map(String device, String export, AccessMode mode) throws Exception {
        return await(client.map(device, "s1", export, mode));
    }

    protected static byte[] readAll(RemoteBlockDevice d, long offset, int len) throws Exception {
        ByteBuffer dst = ByteBuffer.allocate(len);
        await(d.read(offset, dst));
        return dst.array();
    }

    @Test
    void mapGivesTheExportsGeometryAndPublishesTheDevice() throws Exception {
        RemoteBlockDevice d = map("rnbd0", "disk", AccessMode.RW);
        assertEquals(SIZE, d.size());
        assertEquals(512, d.logicalBlockSize());
        assertTrue(d.maxIoSize() >= 4096);
        assertTrue(d.capabilities().write());
        assertTrue(d.capabilities().trim());
        assertEquals("disk", d.exportName());
        assertEquals("s1", d.sessionName());
        assertEquals(List.of(d), published);
        var info = client.devices().get(0);
        assertEquals(DeviceState.MAPPED, info.state());
        assertEquals(SIZE, info.size());
        assertEquals(1, server.exports().get(0).openers().size());
    }

    @Test
    void verifiedRandomIoAtQueueDepth32() throws Exception {
        RemoteBlockDevice d = map("rnbd0", "disk", AccessMode.RW);
        int lanes = 32;
        int lane = (int) (SIZE / lanes);
        byte[] shadow = new byte[(int) SIZE];
        Random seeds = new Random(20261122);
        List<CompletableFuture<Void>> all = new ArrayList<>();
        AtomicInteger verified = new AtomicInteger();
        for (int i = 0; i < lanes; i++) {
            all.add(runLane(d, i * (long) lane, lane, new Random(seeds.nextLong()), shadow, 24, verified));
        }
        for (CompletableFuture<Void> f : all) {
            await(f);
        }
        assertEquals(lanes * 12, verified.get());
        for (long off = 0; off < SIZE; off += 1 << 20) {
            assertArrayEquals(java.util.Arrays.copyOfRange(shadow, (int) off, (int) off + (1 << 20)),
                    readAll(d, off, 1 << 20), "device content at " + off);
        }
        var stats = client.devices().get(0).stats();
        assertEquals(0, stats.errors());
        assertEquals(0, stats.inflight());
        assertEquals(lanes * 12, stats.writes());
    }

    /** One lane: write a random range, every second step read one back and compare. */
    private static CompletableFuture<Void> runLane(RemoteBlockDevice d, long base, int lane, Random r, byte[] shadow,
                                                   int steps, AtomicInteger verified) {
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (int s = 0; s < steps; s++) {
            boolean write = s % 2 == 0;
            int len = (1 + r.nextInt(lane / 512)) * 512;
            long off = base + (long) r.nextInt((lane - len) / 512 + 1) * 512;
            if (write) {
                byte[] data = new byte[len];
                r.nextBytes(data);
                chain = chain.thenCompose(v -> d.write(off, ByteBuffer.wrap(data), false)
                        .thenRun(() -> System.arraycopy(data, 0, shadow, (int) off, len)));
            } else {
                chain = chain.thenCompose(v -> {
                    ByteBuffer dst = ByteBuffer.allocate(len);
                    return d.read(off, dst).thenRun(() -> {
                        if (!java.util.Arrays.equals(dst.array(), 0, len, shadow, (int) off, (int) off + len)) {
                            throw new AssertionError("lane at " + base + ": read " + off + "+" + len + " differs");
                        }
                        verified.incrementAndGet();
                    });
                });
            }
        }
        return chain;
    }

    @Test
    void flushDiscardAndWriteZeroes() throws Exception {
        RemoteBlockDevice d = map("rnbd0", "disk", AccessMode.RW);
        int len = 1 << 20;
        byte[] data = new byte[len];
        new Random(5).nextBytes(data);
        await(d.write(0, ByteBuffer.wrap(data), true));
        await(d.flush());
        await(d.trim(64 << 10, 192 << 10));
        await(d.writeZeroes(512 << 10, 300 << 10, true));
        byte[] expected = data.clone();
        java.util.Arrays.fill(expected, 64 << 10, 256 << 10, (byte) 0);
        java.util.Arrays.fill(expected, 512 << 10, (512 + 300) << 10, (byte) 0);
        assertArrayEquals(expected, readAll(d, 0, len));
        assertEquals(Errno.EINVAL, errnoOf(d.trim(SIZE - 512, 1024)), "discard beyond the end");
        assertEquals(Errno.EINVAL, errnoOf(d.write(100, ByteBuffer.allocate(512), false)), "misaligned");
    }

    /**
     * RNBD 2.2 end to end: WRITE_ZEROES with NOUNMAP reaches the export's device as noUnmap,
     * without it as a zeroing that may unmap, SECURE_ERASE as a secure erase (the test's
     * device can); every range reads back as zeros, the data around it survives.
     */
    @Test
    void writeZeroesNoUnmapAndSecureEraseReachTheBackend() throws Exception {
        Assumptions.assumeTrue(backend instanceof FakeBackend, "counting needs the test's memory backend");
        RemoteBlockDevice d = map("rnbd0", "disk", AccessMode.RW);
        assertTrue(d.capabilities().secureErase(), "the export's device erases securely, OPEN_RSP says so");
        int len = 1 << 20;
        byte[] data = new byte[len];
        new Random(9).nextBytes(data);
        await(d.write(0, ByteBuffer.wrap(data), false));
        await(d.writeZeroes(0, 64 << 10, false, true));
        await(d.writeZeroes(64 << 10, 64 << 10, false, false));
        await(d.secureErase(256 << 10, 128 << 10));
        var dev = ((FakeBackend) backend).device("disk");
        assertEquals(1, dev.noUnmapZeroes());
        assertEquals(2, dev.writeZeroes());
        assertEquals(1, dev.secureErases());
        byte[] expected = data.clone();
        java.util.Arrays.fill(expected, 0, 128 << 10, (byte) 0);
        java.util.Arrays.fill(expected, 256 << 10, 384 << 10, (byte) 0);
        assertArrayEquals(expected, readAll(d, 0, len));
    }

    @Test
    void ioSubmittedUnderAPlugLandsWhenItCloses() throws Exception {
        RemoteBlockDevice d = map("rnbd0", "disk", AccessMode.RW);
        Random rnd = new Random(7);
        byte[] small = new byte[8 * 4096];
        byte[] large = new byte[2 * d.maxIoSize() + 4096]; // three pieces
        rnd.nextBytes(small);
        rnd.nextBytes(large);
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        try (io.rnbd.rnbd.api.BlockPlug plug = d.plug()) {
            for (int i = 0; i < 8; i++) {
                writes.add(d.write(i * 8192L, ByteBuffer.wrap(small, i * 4096, 4096), false));
            }
            writes.add(d.write(1 << 20, ByteBuffer.wrap(large), false));
            // that nothing leaves before the close: PlugTest (rtrs-client), RnbdClientDeviceTest
        }
        for (CompletableFuture<Void> w : writes) {
            await(w);
        }
        for (int i = 0; i < 8; i++) {
            assertArrayEquals(java.util.Arrays.copyOfRange(small, i * 4096, (i + 1) * 4096), readAll(d, i * 8192L, 4096));
        }
        assertArrayEquals(large, readAll(d, 1 << 20, large.length));
        assertEquals(11, server.exports().get(0).stats().writes(), "8 writes and 3 pieces");
    }

    @Test
    void requestsLargerThanMaxIoAreSplit() throws Exception {
        RemoteBlockDevice d = map("rnbd0", "disk", AccessMode.RW);
        int len = 4 * d.maxIoSize() + 512;
        byte[] data = new byte[len];
        new Random(6).nextBytes(data);
        await(d.write(4096, ByteBuffer.wrap(data), false));
        assertEquals(5, server.exports().get(0).stats().writes(), "pieces on the server");
        assertArrayEquals(data, readAll(d, 4096, len));
        assertEquals(1, client.devices().get(0).stats().writes(), "one request for the caller");
    }

    @Test
    void readOnlyMapping() throws Exception {
        BlockIoException e = assertThrows(BlockIoException.class, () -> map("rnbd-rw", "ro-disk", AccessMode.RW));
        assertEquals(Errno.EROFS, e.errno());
        client.unmap("rnbd-rw", false);
        RemoteBlockDevice d = map("rnbd-ro", "ro-disk", AccessMode.RO);
        assertEquals(Errno.EROFS, errnoOf(d.write(0, ByteBuffer.allocate(512), false)));
        assertEquals(Errno.EROFS, errnoOf(d.writeZeroes(0, 512, false)));
        assertEquals(512, readAll(d, 0, 512).length);
        assertEquals(Errno.EEXIST, assertThrows(BlockIoException.class,
                () -> client.map("rnbd-again", "s1", "ro-disk", AccessMode.RO)).errno(), "same export, same session");
    }

    @Test
    void openFailuresAreReportedAndListed() throws Exception {
        BlockIoException e = assertThrows(BlockIoException.class, () -> map("rnbd0", "nope", AccessMode.RW));
        assertEquals(Errno.ENOENT, e.errno());
        var info = client.devices().get(0);
        assertEquals(DeviceState.FAILED, info.state());
        assertEquals(Errno.ENOENT, info.lastError());
        assertEquals(Errno.EEXIST, assertThrows(BlockIoException.class,
                () -> client.map("rnbd0", "s1", "disk", AccessMode.RW)).errno());
        client.unmap("rnbd0", false);
        assertTrue(client.devices().isEmpty());
        assertTrue(published.isEmpty());

        map("rnbd0", "disk", AccessMode.RW);
        client.sessionAdded(transport.connect("s2"));
        BlockIoException busy = assertThrows(BlockIoException.class,
                () -> await(client.map("rnbd1", "s2", "disk", AccessMode.RW)));
        assertEquals(Errno.EBUSY, busy.errno());
        client.unmap("rnbd1", false);
        await(client.map("rnbd2", "s2", "disk", AccessMode.MIGRATION));
    }

    @Test
    void unmapRefusedWhileInUseUnlessForced() throws Exception {
        RemoteBlockDevice d = map("rnbd0", "disk", AccessMode.RW);
        DeviceClaim claim = d.claim("nbd");
        assertEquals(Errno.EBUSY, assertThrows(BlockIoException.class, () -> client.unmap("rnbd0", false)).errno());
        assertEquals(1, client.devices().get(0).users());
        claim.close();
        claim.close();
        assertEquals(0, client.devices().get(0).users());

        Assumptions.assumeTrue(backend instanceof FakeBackend, "parking IO needs the test's memory backend");
        var dev = ((FakeBackend) backend).device("disk");
        dev.hold();
        CompletableFuture<Void> inflight = d.write(0, ByteBuffer.allocate(4096), false);
        Await.until("IO parked in the backend", () -> dev.heldCount() == 1);
        assertEquals(Errno.EBUSY, assertThrows(BlockIoException.class, () -> client.unmap("rnbd0", false)).errno());
        assertEquals(1, client.devices().get(0).stats().inflight());

        client.unmap("rnbd0", true);
        assertEquals(List.of(d), withdrawn);
        assertTrue(client.devices().isEmpty());
        assertEquals(Errno.ENODEV, errnoOf(d.read(0, ByteBuffer.allocate(512))));
        Await.until("CLOSE reached the server", () -> server.exports().get(0).openers().isEmpty());
        dev.release();
        assertEquals(0, errnoOf(inflight), "the parked write still completes");
    }

    @Test
    void resizeIsPickedUp() throws Exception {
        Assumptions.assumeTrue(backend instanceof FakeBackend, "growing needs the test's memory backend");
        RemoteBlockDevice d = map("rnbd0", "disk", AccessMode.RW);
        byte[] data = new byte[4096];
        new Random(8).nextBytes(data);
        await(d.write(0, ByteBuffer.wrap(data), false));
        // The backend is replaced by a bigger one: the export goes offline and online again.
        FakeBackend bigger = new FakeBackend();
        bigger.open(Map.of("id", "disk", "size", Long.toString(2 * SIZE)), false).write(0, ByteBuffer.wrap(data), false);
        server.backendAdded("memory", bigger);
        server.backendRemoved("memory", backend);
        assertEquals(2 * SIZE, await(client.resize("rnbd0")));
        assertEquals(2 * SIZE, d.size());
        await(d.write(2 * SIZE - 4096, ByteBuffer.wrap(data), false));
        assertArrayEquals(data, readAll(d, 2 * SIZE - 4096, 4096));
        assertNotNull(client.devices().get(0));
    }

    /**
     * Issue 20 item 7: an export grown on the server reaches the mapped device without a
     * remap (same device id, MAPPED throughout, watchers told): at once for IO beyond the old
     * end (the client asks before refusing), and by the periodic refresh otherwise. A shrink
     * below the mapped size is refused while the device is mapped.
     */
    @Test
    void liveResizeReachesTheMappedDeviceWithoutARemap() throws Exception {
        io.rnbd.rnbd.backend.memory.internal.MemoryBackend mem = new io.rnbd.rnbd.backend.memory.internal.MemoryBackend();
        server.backendAdded("mem", mem);
        server.addExport(new ExportConfig("live", "mem", false, Set.of(), 0, Map.of("size", "1m")));
        RnbdClientDevice d = (RnbdClientDevice) map("rnbd1", "live", AccessMode.RW);
        List<Long> told = new java.util.concurrent.CopyOnWriteArrayList<>();
        d.watchSize(told::add);
        byte[] data = new byte[4096];
        new Random(20).nextBytes(data);
        await(d.write(0, ByteBuffer.wrap(data), false));
        assertEquals(Errno.EINVAL, errnoOf(d.write(1 << 20, ByteBuffer.wrap(data), false)), "beyond the end");

        assertEquals(4L << 20, server.resizeExport("live", 4L << 20));
        // IO beyond the old end: the device refreshes its size first, no remap
        await(d.write((4L << 20) - 4096, ByteBuffer.wrap(data), false));
        assertArrayEquals(data, readAll(d, (4L << 20) - 4096, 4096));
        assertArrayEquals(data, readAll(d, 0, 4096), "what was there stays");
        assertEquals(4L << 20, d.size());
        assertEquals(List.of(4L << 20), told);

        // grown again: the periodic refresh (run here by hand) picks it up without any IO
        server.resizeExport("live", 8L << 20);
        await(client.refreshSizes());
        assertEquals(8L << 20, d.size());
        assertEquals(List.of(4L << 20, 8L << 20), told);
        assertEquals(io.rnbd.rnbd.api.RnbdClientAdmin.DeviceState.MAPPED, d.state());
        assertEquals(8L << 20, client.devices().stream().filter(i -> i.name().equals("rnbd1")).findFirst()
                .orElseThrow().size());

        BlockIoException busy = assertThrows(BlockIoException.class, () -> server.resizeExport("live", 1 << 20));
        assertEquals(Errno.EBUSY, busy.errno());
        await(d.write((8L << 20) - 4096, ByteBuffer.wrap(data), false));
        assertEquals(8L << 20, await(client.resize("rnbd1")), "rnbd:resize: the size did not change");
    }

    /** The refresh runs every size.refresh.ms on the client's scheduler (fake time here), and 0 stops it. */
    @Test
    void sizesAreRefreshedEverySizeRefreshMs() throws Exception {
        io.rnbd.rnbd.backend.memory.internal.MemoryBackend mem = new io.rnbd.rnbd.backend.memory.internal.MemoryBackend();
        server.backendAdded("mem", mem);
        server.addExport(new ExportConfig("live", "mem", false, Set.of(), 0, Map.of("size", "1m")));
        io.rnbd.testkit.FakeScheduler time = new io.rnbd.testkit.FakeScheduler();
        RnbdClient polling = new RnbdClient(new DevicePublisher() {
            @Override
            public void publish(io.rnbd.rnbd.api.RemoteBlockDevice device) {
            }

            @Override
            public void withdraw(io.rnbd.rnbd.api.RemoteBlockDevice device) {
            }
        }, time, RnbdClient.DEFAULT_SIZE_REFRESH_MS);
        try {
            polling.sessionAdded(transport.connect("s2"));
            RemoteBlockDevice d = await(polling.map("rnbd2", "s2", "live", AccessMode.RO));
            CompletableFuture<Long> grown = new CompletableFuture<>();
            d.watchSize(grown::complete);
            server.resizeExport("live", 2L << 20);
            time.advance(java.time.Duration.ofMillis(RnbdClient.DEFAULT_SIZE_REFRESH_MS - 1));
            assertEquals(1L << 20, d.size(), "not before the refresh is due");
            time.advance(java.time.Duration.ofMillis(1));
            assertEquals(2L << 20, await(grown));
            assertEquals(2L << 20, d.size());
            polling.sizeRefreshMs(0);
            assertEquals(0, time.pending(), "no refresh left scheduled");
            assertThrows(IllegalArgumentException.class, () -> polling.sizeRefreshMs(-1));
        } finally {
            polling.close();
        }
    }
}

package io.rnbd.rnbd.backend.rbd.internal;

import static io.rnbd.testkit.block.BlockDeviceContractTest.expect;
import static io.rnbd.testkit.block.BlockDeviceContractTest.filled;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockRequests;
import io.rnbd.rnbd.api.SizeWatch;
import io.rnbd.testkit.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The backend against the real one-node cluster: creating and naming images, cephx, the
 * exclusive lock between two clients, a resize made with Ceph's CLI, a cluster that stops
 * answering (the OSD stopped with SIGSTOP, its memstore data kept), and what a close leaves.
 */
@ExtendWith(CephCluster.Extension.class)
class RbdClusterTest {
    private static final int MIB = 1 << 20;
    private static CephCluster ceph;
    private final List<RbdBackend> backends = new ArrayList<>();
    private boolean paused;
    @TempDir
    Path tmp;

    @BeforeAll
    static void cluster(CephCluster cluster) {
        ceph = cluster;
    }

    @AfterEach
    void cleanUp() {
        if (paused) {
            ceph.resumeOsd();
        }
        backends.forEach(RbdBackend::close);
    }

    private RbdBackend backend(RbdSettings settings) {
        RbdBackend b = new RbdBackend(settings);
        backends.add(b);
        return b;
    }

    private RbdBackend backend() {
        return backend(ceph.settings());
    }

    private static Map<String, String> with(Map<String, String> base, String... kv) {
        Map<String, String> m = new HashMap<>(base);
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    private void pause() {
        paused = true;
        ceph.pauseOsd();
    }

    private void resume() {
        ceph.resumeOsd();
        paused = false;
    }

    @Test
    void createsAMissingImageOfCreateSizeAndOpensAnExistingOneAsItIs() throws Exception {
        String image = CephCluster.newImage("create");
        RbdBackend b = backend();
        try (BlockDevice dev = b.open(with(ceph.params(image), "create.size", "8m"), false)) {
            assertEquals(8L * MIB, dev.size());
        }
        assertTrue(ceph.rbd("info", "rbd/" + image).contains("size 8 MiB"));
        try (BlockDevice dev = b.open(with(ceph.params(image), "create.size", "16m"), false)) {
            assertEquals(8L * MIB, dev.size(), "an existing image is exported as it is");
        }
    }

    @Test
    void openFailuresAreOneLineNamingWhatToDo() {
        RbdBackend b = backend();
        String image = CephCluster.newImage("missing");
        assertMessage("rbd backend: rbd/" + image + ": no such image (give create.size= to create it)",
                () -> b.open(ceph.params(image), false));
        assertMessage("rbd backend: nopool/" + image + ": no pool 'nopool'",
                () -> b.open(with(ceph.params(image), "pool", "nopool"), false));
        assertMessage("rbd backend: create.size needs a read-write export",
                () -> b.open(with(ceph.params(image), "create.size", "1m"), true));
    }

    @Test
    void aPoolLimitedUserWorksAndAWrongKeyIsRefused() throws Exception {
        String image = CephCluster.newImage("cephx");
        RbdBackend b = backend();
        Map<String, String> rnbd = with(ceph.params(image), "id", "client.rnbd", "keyring",
                ceph.rnbdKeyring.toString(), "create.size", "1m");
        try (BlockDevice dev = b.open(rnbd, false)) {
            CompletableFuture<Void> w = dev.write(0, ByteBuffer.allocateDirect(4096), true);
            w.get(30, TimeUnit.SECONDS);
        }
        Path wrong = tmp.resolve("wrong.keyring");
        // a well-formed key that is not client.rnbd's
        Files.writeString(wrong, "[client.rnbd]\n\tkey = AQBhZ3VlAAAAABAAwDIhTMl3Sm4LmVpj4q3/dA==\n");
        IOException e = assertThrows(IOException.class, () -> b.open(with(rnbd, "keyring", wrong.toString()), false));
        assertEquals("rbd backend: rbd/" + image + ": the cluster refused client.rnbd (wrong key in " + wrong + "?)",
                e.getMessage());
    }

    @Test
    void unreachableMonitorsFailWithinTheConnectTimeout() throws Exception {
        Path conf = tmp.resolve("nowhere.conf");
        // a port that nothing listens on: closed at once by the kernel, so librados retries until the timeout
        Files.writeString(conf, "[global]\nmon host = v2:127.0.0.1:1\n");
        RbdBackend b = backend();
        long t0 = System.nanoTime();
        IOException e = assertThrows(IOException.class, () -> b.open(Map.of("conf", conf.toString(), "image", "x",
                "keyring", ceph.rnbdKeyring.toString(), "id", "rnbd", "connect.timeout.sec", "2"), false));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertEquals("rbd backend: rbd/x: no answer from the monitors of " + conf + " within 2 s (connect.timeout.sec)",
                e.getMessage());
        assertTrue(ms < 15_000, "took " + ms + " ms");
    }

    @Test
    void aSecondWriterIsRefusedWhileTheFirstHoldsTheLockAndTakesOverAfterItsClose() throws Exception {
        String image = CephCluster.newImage("lock");
        RbdBackend first = backend();
        RbdBackend second = backend();
        BlockDevice a = first.open(with(ceph.params(image), "create.size", "4m"), false);
        await(a.write(0, filled(4096, 0x41), false));
        await(a.flush());
        IOException refused = assertThrows(IOException.class, () -> second.open(ceph.params(image), false));
        assertTrue(refused.getMessage().startsWith("rbd backend: rbd/" + image + ": locked by another client (127.0.0.1:"),
                refused.getMessage());
        try (BlockDevice reader = second.open(ceph.params(image), true)) {
            assertArrayEquals(filled(4096, 0x41).array(), read(reader, 0, 4096), "readers are not locked out");
        }
        a.close();
        try (BlockDevice b = second.open(ceph.params(image), false)) {
            assertArrayEquals(filled(4096, 0x41).array(), read(b, 0, 4096));
            await(b.write(4096, filled(4096, 0x42), true));
        }
    }

    @Test
    void aHolderThatWasBlocklistedIsFencedAndAnotherClientTakesTheImage() throws Exception {
        String image = CephCluster.newImage("fence");
        BlockDevice a = backend().open(with(ceph.params(image), "create.size", "4m"), false);
        await(a.write(0, filled(4096, 0x31), true));
        // what a taking-over server's open does to a holder it finds dead: blocklist it
        String watcher = watcher(ceph.rbd("status", "rbd/" + image));
        ceph.ceph("osd", "blocklist", "add", watcher);
        try {
            // The command returns when the monitors have it; the OSD refuses the client once the
            // new map reaches it, so a write or two may still land (as they would have anyway).
            BlockIoException b = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            for (int i = 0; b == null && System.nanoTime() < deadline; i++) {
                CompletableFuture<Void> late = a.write(4096, filled(4096, 0x32), true);
                try {
                    late.get(60, TimeUnit.SECONDS);
                    Thread.sleep(100); // the map is on its way; there is no event to wait on
                } catch (ExecutionException e) {
                    b = assertInstanceOf(BlockIoException.class, e.getCause());
                }
            }
            assertNotNull(b, "the blocklisted client could still write after 60 s");
            assertEquals(Errno.ESHUTDOWN, b.errno(), b.getMessage());
            assertTrue(b.getMessage().contains("fenced"), b.getMessage());
            expect(Errno.ESHUTDOWN, a.write(0, filled(4096, 0x34), true));
            try (BlockDevice taker = backend().open(ceph.params(image), false)) {
                assertArrayEquals(filled(4096, 0x31).array(), read(taker, 0, 4096));
                await(taker.write(4096, filled(4096, 0x33), true));
            }
        } finally {
            ceph.ceph("osd", "blocklist", "rm", watcher);
        }
    }

    @Test
    void anRbdResizeFromTheCliReachesTheDeviceAndItsWatchers() throws Exception {
        String image = CephCluster.newImage("resize");
        // IO is checked against the size the device reports, as rnbd-server checks it
        BlockDevice dev = BlockRequests.checked(backend().open(with(ceph.params(image), "create.size", "8m"), false));
        BlockingQueue<Long> seen = new LinkedBlockingQueue<>();
        try (SizeWatch watch = dev.watchSize(seen::add)) {
            ceph.rbd("resize", "--size", "16M", "rbd/" + image);
            assertEquals(16L * MIB, seen.poll(30, TimeUnit.SECONDS), "grown size reported");
            assertEquals(16L * MIB, dev.size());
            await(dev.write(12L * MIB, filled(4096, 7), false));
            assertArrayEquals(filled(4096, 7).array(), read(dev, 12L * MIB, 4096));

            ceph.rbd("resize", "--size", "4M", "--allow-shrink", "rbd/" + image);
            assertEquals(4L * MIB, seen.poll(30, TimeUnit.SECONDS), "shrunk size reported");
            expect(Errno.EINVAL, dev.read(6L * MIB, ByteBuffer.allocateDirect(4096)));
        }
        ceph.rbd("resize", "--size", "5M", "rbd/" + image);
        // the watch is closed: the listener hears nothing more, the device still follows
        // the size is a librbd notification away; there is no event left to wait on
        Await.until(() -> "the device follows to 5 MiB: " + dev.size(), () -> dev.size() == 5L * MIB,
                Duration.ofSeconds(30));
        assertTrue(seen.isEmpty(), "closed watch still called: " + seen);
    }

    @Test
    void resizeThroughTheDeviceIsWhatCephSees() throws Exception {
        String image = CephCluster.newImage("grow");
        RbdBlockDevice dev = (RbdBlockDevice) backend().open(with(ceph.params(image), "create.size", "4m"), false);
        dev.resizeNow(32L * MIB);
        assertEquals(32L * MIB, dev.size());
        assertTrue(ceph.rbd("info", "rbd/" + image).contains("size 32 MiB"));
        BlockIoException odd = assertThrows(BlockIoException.class, () -> dev.resizeNow(1000));
        assertEquals(Errno.EINVAL, odd.errno());
        // BlockDevice.resize, as rnbd:export-resize calls it: watchers (the export) are told
        java.util.List<Long> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (SizeWatch watch = dev.watchSize(seen::add)) {
            await(dev.resize(64L * MIB));
            assertEquals(64L * MIB, dev.size());
            assertTrue(seen.contains(64L * MIB), seen.toString());
            assertTrue(ceph.rbd("info", "rbd/" + image).contains("size 64 MiB"));
        }
    }

    @Test
    void fuaUsesTheOpFlagUnlessTheImageCachesWritesBack() throws Exception {
        String plain = CephCluster.newImage("fua");
        String cached = CephCluster.newImage("fua-wb");
        RbdBackend b = backend();
        b.open(with(ceph.params(cached), "create.size", "1m"), false).close();
        ceph.rbd("image-meta", "set", "rbd/" + cached, "conf_rbd_cache_policy", "writeback");
        try (RbdBlockDevice p = (RbdBlockDevice) b.open(with(ceph.params(plain), "create.size", "1m"), false);
             RbdBlockDevice c = (RbdBlockDevice) b.open(ceph.params(cached), false)) {
            assertEquals(RbdBlockDevice.Fua.FLAG, p.fuaMode());
            assertEquals(RbdBlockDevice.Fua.FLUSH, c.fuaMode());
            for (RbdBlockDevice d : List.of(p, c)) {
                await(d.write(0, filled(512, 3), true));
                await(d.writeZeroes(512, 512, true));
                assertArrayEquals(filled(512, 3).array(), read(d, 0, 512));
            }
        }
    }

    @Test
    void ioWaitsWhileTheClusterDoesNotAnswerAndCompletesWhenItDoes() throws Exception {
        String image = CephCluster.newImage("stall");
        BlockDevice dev = backend().open(with(ceph.params(image), "create.size", "8m"), false);
        await(dev.write(0, filled(64 * 1024, 0x61), false));
        await(dev.flush());
        pause();
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        for (int i = 1; i <= 8; i++) {
            writes.add(dev.write(i * 64L * 1024, filled(64 * 1024, 0x61 + i), false));
        }
        // what must wait for the OSDs: a FUA write, a flush, a read of data that is only there
        List<CompletableFuture<Void>> durable = new ArrayList<>();
        durable.add(dev.write(9 * 64L * 1024, filled(64 * 1024, 0x6a), true));
        durable.add(dev.flush());
        ByteBuffer early = ByteBuffer.allocateDirect(64 * 1024);
        durable.add(dev.read(0, early));
        // Ceph's behaviour, observed: with op.timeout.sec=0 none of them completes while the OSD
        // is stopped (plain writes may: librbd's write-around cache acknowledges them, and the
        // flush answers for them)
        assertNoneCompletesWithin(1500, "while the OSD was stopped", durable);
        List<CompletableFuture<Void>> during = new ArrayList<>(writes);
        during.addAll(durable);
        resume();
        for (CompletableFuture<Void> f : during) {
            await(f);
        }
        assertArrayEquals(filled(64 * 1024, 0x61).array(), bytes(early));
        for (int i = 0; i <= 9; i++) {
            assertArrayEquals(filled(64 * 1024, 0x61 + i).array(), read(dev, i * 64L * 1024, 64 * 1024), "block " + i);
        }
    }

    @Test
    void librbdsCacheTakesPlainWritesFromTheFirstOneAndAFlushWaitsForTheCluster() throws Exception {
        String image = CephCluster.newImage("cache");
        BlockDevice dev = backend().open(with(ceph.params(image), "create.size", "4m"), false);
        pause();
        // No client has flushed yet. Without the backend's own flush at open, librbd would still
        // be write-through (rbd_cache_writethrough_until_flush) and this write would wait for the OSD.
        CompletableFuture<Void> write = dev.write(0, filled(4096, 0x41), false);
        try {
            write.get(10, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            fail("a plain write waited for the stopped OSD: librbd's cache was write-through; OSD " + ceph.osdState());
        }
        CompletableFuture<Void> flush = dev.flush();
        assertNoneCompletesWithin(1500, "a flush while the OSD was stopped", List.of(flush));
        resume();
        await(flush);
        assertArrayEquals(filled(4096, 0x41).array(), read(dev, 0, 4096));
    }

    @Test
    void withAnOpTimeoutIoFailsWithEtimedoutAndAcknowledgedDataSurvives() throws Exception {
        String image = CephCluster.newImage("timeout");
        BlockDevice dev = backend().open(with(ceph.params(image), "create.size", "8m", "op.timeout.sec", "2"), false);
        await(dev.write(0, filled(4096, 0x71), false));
        await(dev.flush());
        pause();
        long t0 = System.nanoTime();
        CompletableFuture<Void> w = dev.write(8192, filled(4096, 0x72), false);
        ExecutionException e = assertThrows(ExecutionException.class, () -> w.get(30, TimeUnit.SECONDS),
                () -> "the write completed after " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)
                        + " ms with the OSD in " + ceph.osdState());
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        BlockIoException b = assertInstanceOf(BlockIoException.class, e.getCause());
        assertEquals(Errno.ETIMEDOUT, b.errno(), b.getMessage());
        assertTrue(b.getMessage().contains("within op.timeout.sec"), b.getMessage());
        assertTrue(ms >= 1500 && ms < 15_000, "failed after " + ms + " ms");
        resume();
        assertArrayEquals(filled(4096, 0x71).array(), read(dev, 0, 4096));
        await(dev.write(8192, filled(4096, 0x73), true));
        assertArrayEquals(filled(4096, 0x73).array(), read(dev, 8192, 4096));
    }

    @Test
    void stoppingTheBackendWhileTheClusterIsStoppedReturnsAndLeavesNothingOnceItAnswers() throws Exception {
        String image = CephCluster.newImage("stop");
        RbdBackend b = new RbdBackend(ceph.settings(), null, 1000);
        BlockDevice dev = b.open(with(ceph.params(image), "create.size", "4m"), false);
        await(dev.write(0, filled(4096, 0x51), false));
        pause();
        // FUA: a plain write would be acknowledged by librbd's cache at once
        CompletableFuture<Void> stuck = dev.write(4096, filled(4096, 0x52), true);
        long t0 = System.nanoTime();
        b.close();
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms < 5000, "close took " + ms + " ms");
        expect(Errno.ENODEV, dev.read(0, ByteBuffer.allocateDirect(512)));
        assertFalse(stuck.isDone(), "the write in flight was failed before librbd let go of its buffer");
        assertEquals(1, rbdThreads().stream().filter(t -> t.getName().startsWith("rnbd-rbd-rbd/")).count(),
                "the device's poller waits for the cluster");
        resume();
        await(stuck);
        awaitNoRbdThreads();
        assertEquals(0, b.openDevices());
    }

    @Test
    void closedDevicesLeaveNoThreadsAndNoFileDescriptors() throws Exception {
        RbdBackend b = backend();
        String image = CephCluster.newImage("leak");
        cycle(b, image, true);
        awaitNoRbdThreads();
        // librados keeps a few process-wide things from its first use: count from here, once
        // the first cycle's threads are gone (other tests' may still be ending: never more after)
        int threads = settledThreads();
        int fds = openFiles();
        for (int i = 0; i < 3; i++) {
            cycle(b, image, false);
        }
        awaitNoRbdThreads();
        assertTrue(openFiles() <= fds, "file descriptors after 3 open/IO/close cycles: " + openFiles()
                + ", before: " + fds);
        // librados' threads exit asynchronously after rados_shutdown returns
        Await.until(() -> "threads after 3 open/IO/close cycles: " + nativeThreads() + ", before: " + threads,
                () -> nativeThreads() <= threads, Duration.ofSeconds(10));
    }

    /** The thread count once it has not changed for 300 ms (at most 10 s). */
    private static int settledThreads() throws Exception {
        int last = nativeThreads();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            Thread.sleep(300); // threads of librados and of earlier tests exit on their own time
            int now = nativeThreads();
            if (now == last) {
                return now;
            }
            last = now;
        }
        return last;
    }

    private static void cycle(RbdBackend b, String image, boolean create) throws Exception {
        try (BlockDevice dev = b.open(create ? with(ceph.params(image), "create.size", "4m") : ceph.params(image),
                false)) {
            await(dev.write(0, filled(4096, 9), true));
            read(dev, 0, 4096);
        }
    }

    /** The devices' pollers (rnbd-rbd-POOL/IMAGE) and librbd's threads attached to the JVM (rnbd-rbd-librbd). */
    private static List<Thread> rbdThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("rnbd-rbd-")).toList();
    }

    private static void awaitNoRbdThreads() throws InterruptedException {
        for (Thread t : rbdThreads()) {
            t.join(30_000);
        }
        assertEquals(List.of(), rbdThreads());
    }

    private static int nativeThreads() {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/task"))) {
            return (int) s.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int openFiles() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return (int) s.count();
        }
    }

    // ---- helpers

    /** The address of the (one) watcher {@code rbd status} lists, e.g. 127.0.0.1:0/2484850395. */
    private static String watcher(String status) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("watcher=(\\S+)").matcher(status);
        assertTrue(m.find(), "no watcher in: " + status);
        return m.group(1);
    }

    private interface Open {
        void run() throws Exception;
    }

    private static void assertMessage(String expected, Open open) {
        Exception e = assertThrows(Exception.class, open::run);
        assertInstanceOf(IOException.class, e);
        assertEquals(expected, e.getMessage());
    }

    /**
     * That none of {@code fs} completes for {@code ms}, waiting on them rather than sleeping:
     * the first one that does ends the wait and fails the test at once. Proving that a stopped
     * OSD holds something back takes a real wait; the cluster keeps no clock a test can move.
     */
    static void assertNoneCompletesWithin(long ms, String what, List<? extends CompletableFuture<?>> fs)
            throws InterruptedException {
        try {
            CompletableFuture.anyOf(fs.toArray(CompletableFuture[]::new)).get(ms, TimeUnit.MILLISECONDS);
        } catch (TimeoutException expected) {
            return;
        } catch (ExecutionException failedEarly) {
            // completed all the same, by failing: reported below
        }
        fail("completed " + what + ": " + fs);
    }

    static void await(CompletableFuture<?> f) throws Exception {
        try {
            f.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw (Exception) e.getCause();
        }
    }

    static byte[] read(BlockDevice dev, long off, int len) throws Exception {
        ByteBuffer dst = ByteBuffer.allocateDirect(len);
        await(dev.read(off, dst));
        return bytes(dst);
    }

    static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.capacity()];
        b.duplicate().clear().get(out);
        return out;
    }
}

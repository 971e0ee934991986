package io.rnbd.rxe.interop;

import static io.rnbd.rxe.interop.LinuxRnbd.path;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rxe.interop.LinuxRnbd.MapSpec;
import io.rnbd.rxe.interop.LinuxRnbd.Mapped;
import io.rnbd.rxe.interop.LinuxRnbd.RdmaStats;
import io.rnbd.testkit.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kernel to kernel, the sanity check of the interop rig: Linux's rnbd-client maps Linux's
 * rnbd-server export of a brd RAM disk over two paths, one per soft-RoCE device (rxe0 and
 * rxe1), verified O_DIRECT IO, a path removed and re-added through sysfs while IO runs, then
 * unmapped. Nothing of the appliance runs here: if this fails, the module build, the two-path
 * fixture or the sysfs helpers are wrong, not the appliance.
 */
class LinuxRnbdTwoPathTest {
    @RegisterExtension
    static final LinuxModules linux = LinuxModules.eachTest().requiring("brd").unloading("brd");

    private static final String SESS = "interop-kk";
    private static final int DISK_MIB = 64;
    /** The first 16 MiB are written once and checked at the end; the IO loop runs above them. */
    private static final int FIXED_MIB = 16;
    private static final int CHUNK_MIB = 8;

    @TempDir
    Path tmp;
    private Mapped mapped;

    @Test
    void twoPathsCarryVerifiedIoAndAPathIsRemovedAndReAddedDuringIo() throws Exception {
        LinuxRnbd.unloadAll();
        Guest.unload("brd");
        Guest.step("kernel<->kernel: load brd, rtrs-server, rnbd-server, rnbd-client");
        Guest.modprobe("brd", "rd_nr=1", "rd_size=" + DISK_MIB * 1024);
        LinuxRnbd.loadServer(LinuxRnbd.DEFAULT_PORT, "/dev", true);
        LinuxRnbd.loadClient();

        MapSpec spec = MapSpec.of(SESS, "ram0", path(Guest.addr()), path(Guest.addr2())).destPort(LinuxRnbd.DEFAULT_PORT);
        Guest.step("map_device: " + spec.line());
        mapped = LinuxRnbd.map(spec);
        assertEquals((long) DISK_MIB << 20, mapped.size(), "size of " + mapped.dev());
        assertEquals("rw", Guest.readSysfs(mapped.sysfs().resolve("access_mode")));
        List<Path> paths = LinuxRnbd.paths(SESS);
        assertEquals(2, paths.size(), "paths of " + SESS + ": " + paths);
        for (Path p : paths) {
            assertEquals("connected", LinuxRnbd.state(p), p.toString());
        }
        assertEquals(Set.of("rxe0", "rxe1"), paths.stream().map(p -> Guest.readSysfs(p.resolve("hca_name")))
                .collect(Collectors.toSet()), "one path per soft-RoCE device");
        // round-robin: both paths must carry IO, which the checks below rely on
        LinuxRnbd.mpathPolicy(SESS, "round-robin");

        Guest.step("mapped as " + mapped.dev() + "; verified IO");
        // 1. verified IO over both paths, and the server's RAM disk holds the same bytes
        byte[] fixed = random(FIXED_MIB << 20, 1);
        Path in = Files.write(tmp.resolve("fixed.in"), fixed);
        dd("if=" + in, "of=" + mapped.dev(), "bs=1M", "oflag=direct");
        assertArrayEquals(fixed, readBack(mapped.dev(), 0, FIXED_MIB), "read back through " + mapped.dev());
        assertArrayEquals(fixed, readBack(Path.of("/dev/ram0"), 0, FIXED_MIB), "the server's /dev/ram0");
        for (Path p : paths) {
            RdmaStats s = LinuxRnbd.stats(p);
            assertTrue(s.writes() > 0 && s.reads() > 0, "path " + p.getFileName() + " carried reads and writes: " + s);
        }

        Guest.step("IO loop; remove and re-add the path to " + Guest.addr2());
        // 2. IO runs while the second path is removed and added again; no IO may fail
        long ioErrorsBefore = ioErrorLines();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger passes = new AtomicInteger();
        CompletableFuture<Void> io = CompletableFuture.runAsync(() -> ioLoop(stop, passes));
        try {
            awaitPasses(io, passes, 1);
            Path second = LinuxRnbd.pathTo(SESS, Guest.addr2()).orElseThrow();
            Guest.step("remove_path " + second.getFileName() + " after " + passes.get() + " passes");
            LinuxRnbd.removePath(second);
            assertFalse(Files.exists(second), second + " still there after remove_path");
            assertEquals(1, LinuxRnbd.paths(SESS).size(), "paths after remove_path");
            awaitPasses(io, passes, passes.get() + 2);              // a whole pass over the first path alone

            Guest.step("add_path " + path(Guest.addr2()) + " after " + passes.get() + " passes");
            LinuxRnbd.addPath(SESS, path(Guest.addr2()));
            Await.until("the re-added path connected",
                    () -> LinuxRnbd.pathTo(SESS, Guest.addr2()).map(p -> "connected".equals(LinuxRnbd.state(p))).orElse(false),
                    Guest.timeout(Duration.ofSeconds(10)));
            Path readded = LinuxRnbd.pathTo(SESS, Guest.addr2()).orElseThrow();
            awaitPasses(io, passes, passes.get() + 2);             // a whole pass over both again
            RdmaStats s = LinuxRnbd.stats(readded);
            assertTrue(s.requests() > 0, "the re-added path carries IO again: " + s);
        } finally {
            stop.set(true);
        }
        io.get(Guest.timeout(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
        assertEquals(ioErrorsBefore, ioErrorLines(), "I/O errors in the kernel log:\n" + Guest.dmesgTail(20));
        assertEquals(2, LinuxRnbd.paths(SESS).size());
        // what was written first is still there, through the client and on the server
        assertArrayEquals(fixed, readBack(mapped.dev(), 0, FIXED_MIB), "first 16 MiB after the path change");

        Guest.step("unmap after " + passes.get() + " passes");
        // 3. unmap: the device goes, and the session with it (its last device)
        LinuxRnbd.unmap(mapped, false);
        Await.until("session " + SESS + " closed",
                () -> !Files.exists(LinuxRnbd.session(SESS)), Guest.timeout(Duration.ofSeconds(5)));
        mapped = null;
    }

    /**
     * Writes CHUNK_MIB of fresh random data at a rotating offset above the fixed area, O_DIRECT,
     * reads it back and compares, until stopped. dd's non-zero exit (an IO error) or a
     * mismatch ends the loop with the failure.
     */
    private void ioLoop(AtomicBoolean stop, AtomicInteger passes) {
        int slots = (DISK_MIB - FIXED_MIB) / CHUNK_MIB;
        try {
            for (int k = 0; !stop.get(); k++) {
                int offMib = FIXED_MIB + (k % slots) * CHUNK_MIB;
                byte[] data = random(CHUNK_MIB << 20, 100 + k);
                Path in = Files.write(tmp.resolve("loop.in"), data);
                dd("if=" + in, "of=" + mapped.dev(), "bs=1M", "seek=" + offMib, "oflag=direct", "conv=notrunc");
                byte[] back = readBack(mapped.dev(), offMib, CHUNK_MIB);
                if (!Arrays.equals(data, back)) {
                    throw new AssertionError("pass " + k + ": " + CHUNK_MIB + " MiB at " + offMib + " MiB read back differently");
                }
                passes.incrementAndGet();
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void awaitPasses(CompletableFuture<Void> io, AtomicInteger passes, int n) throws Exception {
        Await.until(n + " IO passes", () -> io.isDone() || passes.get() >= n, Guest.timeout(Duration.ofSeconds(20)));
        if (io.isDone()) {
            io.get();        // the loop ended early: its failure
            throw new AssertionError("the IO loop stopped before " + n + " passes");
        }
    }

    private byte[] readBack(Path dev, int offMib, int mib) throws java.io.IOException {
        Path out = tmp.resolve("readback." + dev.getFileName());
        dd("if=" + dev, "of=" + out, "bs=1M", "skip=" + offMib, "count=" + mib, "iflag=direct");
        return Files.readAllBytes(out);
    }

    private static void dd(String... args) {
        String[] cmd = new String[args.length + 2];
        cmd[0] = "dd";
        System.arraycopy(args, 0, cmd, 1, args.length);
        cmd[cmd.length - 1] = "status=none";
        Guest.check(Guest.timeout(Duration.ofSeconds(30)), cmd);
    }

    private static byte[] random(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** Lines of the kernel log that report a failed block IO (blk_update_request / I/O error, dev ...). */
    private static long ioErrorLines() {
        return Arrays.stream(Guest.check("dmesg").split("\n"))
                .filter(l -> l.contains("I/O error") || l.contains("blk_update_request")).count();
    }
}

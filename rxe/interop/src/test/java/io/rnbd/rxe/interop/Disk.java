package io.rnbd.rxe.interop;

import io.rnbd.testkit.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * What the interop tests do to a Linux block device: O_DIRECT dd in and out, a verifying IO
 * loop that runs while paths come and go, the kernel log's IO errors, an ext4 file system
 * made, filled, checked and read back.
 */
final class Disk {
    private Disk() {
    }

    static byte[] random(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    static void dd(String... args) {
        String[] cmd = new String[args.length + 2];
        cmd[0] = "dd";
        System.arraycopy(args, 0, cmd, 1, args.length);
        cmd[cmd.length - 1] = "status=none";
        Guest.Result r = Guest.run(Guest.timeout(Duration.ofSeconds(30)), cmd);
        if (!r.ok()) {
            // an IO error's cause is in the kernel's log (rnbd-client, rtrs-client), not in dd's words
            fail(r + "\nkernel log:\n" + Guest.dmesgTail(20));
        }
    }

    static void write(Path dev, int offMib, byte[] data, Path tmp) throws IOException {
        Path in = Files.write(tmp.resolve("write.in"), data);
        dd("if=" + in, "of=" + dev, "bs=1M", "seek=" + offMib, "oflag=direct", "conv=notrunc");
    }

    static byte[] read(Path dev, int offMib, int mib, Path tmp) throws IOException {
        Path out = tmp.resolve("readback." + dev.getFileName());
        dd("if=" + dev, "of=" + out, "bs=1M", "skip=" + offMib, "count=" + mib, "iflag=direct");
        return Files.readAllBytes(out);
    }

    /** Lines of the kernel log that report a failed block IO. */
    static long ioErrorLines() {
        return Arrays.stream(Guest.check("dmesg").split("\n"))
                .filter(l -> l.contains("I/O error") || l.contains("blk_update_request")).count();
    }

    /**
     * Until stopped: write {@code chunkMib} of fresh random data at a rotating offset in
     * [{@code fromMib}, {@code toMib}), O_DIRECT, read it back and compare. dd's non-zero exit
     * (an IO error) or a mismatch ends it with the failure.
     */
    static final class IoLoop implements AutoCloseable {
        private final AtomicBoolean stop = new AtomicBoolean();
        private final AtomicInteger passes = new AtomicInteger();
        private final CompletableFuture<Void> io;

        IoLoop(Path dev, int fromMib, int toMib, int chunkMib, Path tmp) {
            int slots = (toMib - fromMib) / chunkMib;
            io = CompletableFuture.runAsync(() -> {
                try {
                    for (int k = 0; !stop.get(); k++) {
                        int offMib = fromMib + (k % slots) * chunkMib;
                        byte[] data = random(chunkMib << 20, 100 + k);
                        Path in = Files.write(tmp.resolve("loop.in"), data);
                        dd("if=" + in, "of=" + dev, "bs=1M", "seek=" + offMib, "oflag=direct", "conv=notrunc");
                        Path out = tmp.resolve("loop.out");
                        dd("if=" + dev, "of=" + out, "bs=1M", "skip=" + offMib, "count=" + chunkMib, "iflag=direct");
                        if (!Arrays.equals(data, Files.readAllBytes(out))) {
                            throw new AssertionError("pass " + k + ": " + chunkMib + " MiB at " + offMib
                                    + " MiB read back differently");
                        }
                        passes.incrementAndGet();
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }

        int passes() {
            return passes.get();
        }

        /** Waits for {@code more} passes beyond the current count; fails if the loop failed. */
        void awaitMore(int more) throws Exception {
            int n = passes.get() + more;
            Await.until(n + " IO passes", () -> io.isDone() || passes.get() >= n,
                    Guest.timeout(Duration.ofSeconds(20)));
            if (io.isDone()) {
                io.get();
                throw new AssertionError("the IO loop stopped before " + n + " passes");
            }
        }

        @Override
        public void close() throws Exception {
            stop.set(true);
            io.get(Guest.timeout(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /**
     * mkfs.ext4 on {@code dev}, files written with their sha256, unmounted, {@code e2fsck -fn}
     * clean, mounted again and every file compared: what a Linux host does with a disk.
     */
    static void ext4RoundTrip(Path dev, Path tmp) throws IOException {
        Path mnt = Files.createDirectories(tmp.resolve("mnt"));
        Guest.Result mkfs = Guest.run(Guest.timeout(Duration.ofSeconds(60)), "mkfs.ext4", "-q", "-F", dev.toString());
        if (!mkfs.ok()) {
            throw new AssertionError(mkfs + "\nkernel log:\n" + Guest.dmesgTail(30));
        }
        Guest.check(Guest.timeout(Duration.ofSeconds(30)), "mount", dev.toString(), mnt.toString());
        try {
            for (int i = 0; i < 8; i++) {
                Files.write(mnt.resolve("f" + i), random(256 * 1024 + i * 4096, 500 + i));
            }
            Guest.sh(Guest.timeout(Duration.ofSeconds(30)), "cd " + mnt + " && sha256sum f* > " + tmp.resolve("sums")
                    + " && sync");
        } finally {
            Guest.check(Guest.timeout(Duration.ofSeconds(30)), "umount", mnt.toString());
        }
        Guest.check(Guest.timeout(Duration.ofSeconds(60)), "e2fsck", "-fn", dev.toString());
        Guest.check(Guest.timeout(Duration.ofSeconds(30)), "mount", dev.toString(), mnt.toString());
        try {
            Guest.sh(Guest.timeout(Duration.ofSeconds(30)), "cd " + mnt + " && sha256sum -c --quiet " + tmp.resolve("sums"));
        } finally {
            Guest.check(Guest.timeout(Duration.ofSeconds(30)), "umount", mnt.toString());
        }
    }

    static List<String> lines(String s) {
        return Arrays.stream(s.split("\n")).filter(l -> !l.isBlank()).toList();
    }
}

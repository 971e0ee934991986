package io.rnbd.rnbd.backend.file.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.Capabilities;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileBackendTest {
    private final FileBackend backend = new FileBackend(2);
    @TempDir
    Path dir;

    @AfterEach
    void close() {
        backend.close();
    }

    private BlockDevice open(Map<String, String> params) throws IOException {
        return backend.open(params, false);
    }

    private static void await(CompletableFuture<?> f) throws Exception {
        f.get(30, TimeUnit.SECONDS);
    }

    private static byte[] pattern(int len, int seed) {
        byte[] b = new byte[len];
        for (int i = 0; i < len; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    private static byte[] read(BlockDevice dev, long off, int len) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(len);
        await(dev.read(off, b));
        return b.array();
    }

    @Test
    void createsASparseFileOfTheGivenSize() throws Exception {
        Path f = dir.resolve("new.img");
        BlockDevice dev = open(Map.of("path", f.toString(), "size", "1g"));
        assertEquals(1L << 30, dev.size());
        assertEquals(1L << 30, Files.size(f));
        assertEquals(FileNative.UNAVAILABLE == null ? new Capabilities(true, true, true, true, true, true, true, false)
                : new Capabilities(true, true, true, false, false, true), dev.capabilities());
    }

    /** 512-byte blocks the file system holds for {@code f} (st_blocks). */
    private static long blocks(Path f) throws Exception {
        io.rnbd.testkit.ExternalTools.Result r = io.rnbd.testkit.ExternalTools.run(java.time.Duration.ofSeconds(10),
                "stat", "-c", "%b", f.toString());
        assertEquals(0, r.exit(), r.output());
        return Long.parseLong(r.output().trim());
    }

    /**
     * RNBD 2.2 on a file: WRITE_ZEROES without NOUNMAP and DISCARD punch a hole (fallocate
     * PUNCH_HOLE), with NOUNMAP the range is zeroed and stays allocated (ZERO_RANGE, or punch
     * and allocate), also over a hole. Checked on the blocks the file system holds.
     */
    @Test
    void writeZeroesPunchesAHoleUnlessNoUnmapKeepsTheRangeAllocated() throws Exception {
        zeroesOn(dir.resolve("zeroes.img"));
    }

    /** tmpfs has PUNCH_HOLE but no ZERO_RANGE: NOUNMAP is a punch and an allocation there. */
    @Test
    void noUnmapWithoutZeroRangePunchesAndAllocates() throws Exception {
        Path shm = Path.of("/dev/shm");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(shm) && Files.isWritable(shm),
                "no writable /dev/shm (tmpfs) here");
        Path f = Files.createTempFile(shm, "rnbd-file-test", ".img");
        Files.delete(f);
        try {
            zeroesOn(f);
        } finally {
            Files.deleteIfExists(f);
        }
    }

    private void zeroesOn(Path f) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(FileNative.UNAVAILABLE == null,
                () -> "no fallocate here: " + FileNative.UNAVAILABLE);
        BlockDevice dev = open(Map.of("path", f.toString(), "size", "4m"));
        int mib = 1 << 20;
        await(dev.write(0, ByteBuffer.wrap(pattern(mib, 3)), false));
        await(dev.flush());
        long written = blocks(f);
        assertTrue(written >= mib / 512, "1 MiB written: " + written + " blocks");

        await(dev.writeZeroes(0, mib / 2, true, true));
        assertArrayEquals(new byte[mib / 2], read(dev, 0, mib / 2));
        assertEquals(written, blocks(f), "NOUNMAP: zeroed and still allocated");

        await(dev.writeZeroes(0, mib / 2, false, false));
        assertTrue(blocks(f) <= written - mib / 2 / 512, "without NOUNMAP a hole is punched: " + blocks(f));
        await(dev.trim(mib / 2, mib / 2));
        assertArrayEquals(new byte[mib], read(dev, 0, mib));
        assertTrue(blocks(f) < 64, "both halves punched: " + blocks(f));

        await(dev.writeZeroes(2L * mib, mib, false, true));
        assertTrue(blocks(f) >= mib / 512, "NOUNMAP over a hole allocates it: " + blocks(f));
        assertArrayEquals(new byte[mib], read(dev, 2L * mib, mib));
    }

    @Test
    void flushedAndFuaWritesSurviveCloseAndReopen() throws Exception {
        Path f = dir.resolve("durable.img");
        Map<String, String> params = Map.of("path", f.toString(), "size", "1m");
        BlockDevice dev = open(params);
        await(dev.write(4096, ByteBuffer.wrap(pattern(8192, 1)), false));
        await(dev.flush());
        await(dev.write(65536, ByteBuffer.wrap(pattern(4096, 2)), true));
        dev.close();

        try (FileBackend other = new FileBackend(1)) {
            BlockDevice again = other.open(Map.of("path", f.toString()), true);
            assertEquals(1 << 20, again.size());
            assertArrayEquals(pattern(8192, 1), read(again, 4096, 8192));
            assertArrayEquals(pattern(4096, 2), read(again, 65536, 4096));
            assertArrayEquals(new byte[4096], read(again, 0, 4096));
        }
    }

    @Test
    void createTrueExtendsButNeverTruncates() throws Exception {
        Path f = dir.resolve("grow.img");
        Files.write(f, pattern(4096, 3));
        IOException tooSmall = assertThrows(IOException.class, () -> open(Map.of("path", f.toString(), "size", "1m")));
        assertEquals("file backend: " + f + ": is 4096 bytes, smaller than size=1048576 (create=true extends it)",
                tooSmall.getMessage());

        BlockDevice dev = open(Map.of("path", f.toString(), "size", "1m", "create", "true"));
        assertEquals(1 << 20, dev.size());
        assertArrayEquals(pattern(4096, 3), read(dev, 0, 4096));
        dev.close();

        BlockDevice capped = open(Map.of("path", f.toString(), "size", "8k", "create", "true"));
        assertEquals(8192, capped.size(), "size caps the device");
        assertEquals(1 << 20, Files.size(f), "the file is not truncated");
    }

    @Test
    void aFileSizeOffTheBlockSizeIsRoundedDown() throws Exception {
        Path f = dir.resolve("odd.img");
        Files.write(f, new byte[1000]);
        assertEquals(512, open(Map.of("path", f.toString())).size());
        Files.write(f, new byte[100]);
        IOException e = assertThrows(IOException.class, () -> open(Map.of("path", f.toString())));
        assertTrue(e.getMessage().endsWith("smaller than one block of 512 bytes"), e.getMessage());
    }

    @Test
    void badPathsFailWithOneClearLine() throws Exception {
        Path missing = dir.resolve("missing.img");
        assertMessage("file backend: " + missing + ": no such file (give size= to create it)",
                Map.of("path", missing.toString()), false);
        assertMessage("file backend: " + missing + ": no such file", Map.of("path", missing.toString()), true);
        Path noDir = dir.resolve("no/such/dir/x.img");
        assertMessage("file backend: " + noDir + ": no such file or directory",
                Map.of("path", noDir.toString(), "size", "1m"), false);
        assertMessage("file backend: " + dir + ": is a directory", Map.of("path", dir.toString()), false);
        assertMessage("file backend: path=disk.img must be absolute", Map.of("path", "disk.img"), false);
        assertMessage("file backend: parameter 'path' is required (e.g. path=/var/lib/rnbd/disk0.img)", Map.of(), false);
        assertMessage("file backend: unknown parameter 'szie' (takes: path, size, create, direct)",
                Map.of("path", missing.toString(), "szie", "1m"), false);
        assertMessage("file backend: size=big is not a size (e.g. 512, 64k, 1m, 1g, 1t)",
                Map.of("path", missing.toString(), "size", "big"), false);
        assertMessage("file backend: direct=maybe is not true or false",
                Map.of("path", missing.toString(), "direct", "maybe"), false);
        assertMessage("file backend: " + missing + ": create=true needs a read-write open",
                Map.of("path", missing.toString(), "create", "true"), true);
        Path empty = Files.createFile(dir.resolve("empty.img"));
        assertMessage("file backend: " + empty + ": is empty (give size= and create=true to extend it)",
                Map.of("path", empty.toString()), false);
        assertFalse(Files.exists(missing), "a failed open creates nothing");
    }

    @Test
    void aSizeOffTheSectorIsRefusedBeforeAnythingIsCreated() {
        // it used to create the file, find it smaller than a block and delete it again
        Path f = dir.resolve("tiny.img");
        assertMessage("file backend: size=100 must be a positive multiple of 512 bytes",
                Map.of("path", f.toString(), "size", "100"), false);
        assertFalse(Files.exists(f));
    }

    @Test
    void permissionDeniedIsSaidSo() throws Exception {
        Assumptions.assumeFalse("root".equals(System.getProperty("user.name")), "root bypasses file permissions");
        Path f = dir.resolve("locked.img");
        Files.write(f, new byte[4096]);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("r--------"));
        assertMessage("file backend: " + f + ": permission denied", Map.of("path", f.toString()), false);
    }

    private void assertMessage(String expected, Map<String, String> params, boolean readOnly) {
        IOException e = assertThrows(IOException.class, () -> backend.open(params, readOnly));
        assertEquals(expected, e.getMessage());
    }

    @Test
    void ioRunsOnTheBackendThreadsWhichStopOnClose() throws Exception {
        BlockDevice dev = open(Map.of("path", dir.resolve("t.img").toString(), "size", "1m"));
        ByteBuffer big = ByteBuffer.allocate(dev.maxIoSize());
        String caller = Thread.currentThread().getName();
        String[] ranOn = new String[1];
        CompletableFuture<Void> f = dev.write(0, big, true).whenComplete((v, t) -> ranOn[0] = Thread.currentThread().getName());
        await(f);
        assertTrue(ranOn[0].startsWith("rnbd-file-io-") || ranOn[0].equals(caller));
        List<Thread> threads = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("rnbd-file-io-")).collect(Collectors.toList());
        assertFalse(threads.isEmpty());

        backend.close();
        for (Thread t : threads) {
            t.join(10_000);
            assertFalse(t.isAlive(), t.getName() + " survived close");
        }
        ExecutionException e = assertThrows(ExecutionException.class, () -> dev.read(0, ByteBuffer.allocate(512)).get());
        assertEquals(Errno.ENODEV, BlockIoException.errnoOf(e));
        IOException refused = assertThrows(IOException.class, () -> open(Map.of("path", dir.resolve("t.img").toString())));
        assertEquals("file backend is stopped", refused.getMessage());
    }

    @Test
    void trimAndZeroesOfLargeRangesWriteZeros() throws Exception {
        BlockDevice dev = open(Map.of("path", dir.resolve("z.img").toString(), "size", "4m"));
        byte[] ones = new byte[dev.maxIoSize()];
        Arrays.fill(ones, (byte) 1);
        for (long off = 0; off < dev.size(); off += ones.length) {
            await(dev.write(off, ByteBuffer.wrap(ones), false));
        }
        await(dev.trim(512, dev.size() - 1024));
        assertArrayEquals(new byte[] {1, 0}, new byte[] {read(dev, 0, 512)[511], read(dev, 512, 512)[0]});
        assertEquals(1, read(dev, dev.size() - 512, 512)[0]);
        assertArrayEquals(new byte[512], read(dev, dev.size() - 1024, 512));
    }

    @Test
    void blockDevicesTakeTheirSizeFromTheDevice() throws Exception {
        String dev = System.getenv("RNBD_TEST_BLOCK_DEVICE");
        Assumptions.assumeTrue(dev != null && !dev.isBlank(),
                "set RNBD_TEST_BLOCK_DEVICE=/dev/... to test a block device (opened read-only)");
        Path sys = Path.of("/sys/class/block", Path.of(dev).getFileName().toString(), "size");
        long sectors = Long.parseLong(Files.readString(sys).trim());
        BlockDevice bd = backend.open(Map.of("path", dev), true);
        assertEquals(sectors * 512, bd.size());
        assertEquals(512, read(bd, 0, 512).length);
    }

    @Test
    void directWhereTheFilesystemRefusesItFailsWithAClearMessage() throws Exception {
        Path shm = Path.of("/dev/shm");
        Assumptions.assumeTrue(Files.isDirectory(shm) && Files.isWritable(shm), "no /dev/shm (tmpfs)");
        Path f = Files.createTempFile(shm, "rnbd-direct", ".img");
        try {
            BlockDevice dev = backend.open(Map.of("path", f.toString(), "size", "1m", "create", "true",
                    "direct", "true"), false);
            dev.close();
            Assumptions.abort("this kernel's tmpfs supports O_DIRECT: nothing to refuse");
        } catch (IOException e) {
            assertTrue(e.getMessage().startsWith("file backend: " + f + ": O_DIRECT "), e.getMessage());
            assertTrue(Files.exists(f), "an existing file is never deleted");
            assertTrue(e.getMessage().endsWith("; use direct=false"), e.getMessage());
        } finally {
            Files.deleteIfExists(f);
        }
    }

    /** rnbd:export-add's check: sizes that could never open are refused, a missing file is not. */
    @Test
    void validateRefusesImpossibleSizesButNotAMissingFile() throws Exception {
        String missing = dir.resolve("later.img").toString();
        for (String bad : new String[] {"513", "9223372036854775807", "2000000t", "0"}) {
            IOException e = assertThrows(IOException.class,
                    () -> backend.validate(Map.of("path", missing, "size", bad), false), bad);
            assertTrue(e.getMessage().startsWith("file backend: size="), e.getMessage());
        }
        assertThrows(IOException.class, () -> backend.validate(Map.of("path", "relative.img"), false));
        assertThrows(IOException.class, () -> backend.validate(Map.of("path", dir.toString()), false));
        backend.validate(Map.of("path", missing), false);
        backend.validate(Map.of("path", missing, "size", "1m"), false);
        assertFalse(Files.exists(Path.of(missing)), "validate creates nothing");
    }

    /** A whole-file export (no size=) follows the file: truncate -s from outside is seen and told. */
    @Test
    void aWholeFileExportFollowsTheFileAndTellsWatchers() throws Exception {
        Path f = dir.resolve("grow.img");
        Files.write(f, new byte[8192]);
        BlockDevice dev = open(Map.of("path", f.toString()));
        List<Long> told = new java.util.concurrent.CopyOnWriteArrayList<>();
        dev.watchSize(told::add);
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(f,
                java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(1), (1 << 20) + 600); // grown, and not to a sector boundary
        }
        assertEquals((1 << 20) + 512, dev.size(), "rounded down to the sector");
        assertEquals(List.of((1L << 20) + 512), told);
        byte[] p = pattern(512, 3);
        await(dev.write(1 << 20, ByteBuffer.wrap(p), false));
        assertArrayEquals(p, read(dev, 1 << 20, 512));
    }

    @Test
    void resizeExtendsTheFileSparselyAndAWindowOnlyMovesItsEnd() throws Exception {
        Path f = dir.resolve("r.img");
        BlockDevice whole = open(Map.of("path", f.toString(), "size", "64k", "create", "true"));
        await(whole.resize(1 << 20));
        assertEquals(1 << 20, whole.size());
        assertEquals(1 << 20, Files.size(f));
        byte[] p = pattern(4096, 9);
        await(whole.write((1 << 20) - 4096, ByteBuffer.wrap(p), true));
        assertArrayEquals(p, read(whole, (1 << 20) - 4096, 4096));
        assertArrayEquals(new byte[512], read(whole, 64 << 10, 512), "the grown part reads zeros");
        ExecutionException odd = assertThrows(ExecutionException.class, () -> await(whole.resize(1000)));
        assertEquals(Errno.EINVAL, BlockIoException.errnoOf(odd));

        // size= makes a window on the file: shrinking it must not cut the file
        await(whole.resize(512 << 10));
        assertEquals(512 << 10, whole.size());
        assertEquals(1 << 20, Files.size(f), "a window's shrink leaves the file alone");
        BlockDevice ro = backend.open(Map.of("path", f.toString()), true);
        ExecutionException e = assertThrows(ExecutionException.class, () -> await(ro.resize(2 << 20)));
        assertEquals(Errno.EROFS, BlockIoException.errnoOf(e));
    }

    @Test
    void isAServiceLoaderProvider() {
        assertTrue(ServiceLoader.load(BlockBackend.class).stream().anyMatch(p -> p.type() == FileBackend.class));
    }
}

package io.rnbd.testkit.block;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockRequests;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link BlockDevice} a backend opens must do. A backend's test extends this and
 * says how to open a device; the memory, file and RBD backends run it.
 * The device is driven as rnbd-server and the load generator drive it, through the one check
 * of requests above the backends ({@link BlockRequests#checked}): bad requests must be
 * refused there and never touch data.
 */
public abstract class BlockDeviceContractTest {
    protected static final long SIZE = 4L << 20;

    private final List<BlockDevice> opened = new ArrayList<>();

    /** A fresh device of {@code size} bytes; a read-only one may be all zeros. */
    protected abstract BlockDevice open(long size, boolean readOnly) throws IOException;

    protected final BlockDevice device(long size, boolean readOnly) throws IOException {
        BlockDevice dev = BlockRequests.checked(open(size, readOnly));
        opened.add(dev);
        return dev;
    }

    @AfterEach
    void closeDevices() {
        opened.forEach(BlockDevice::close);
    }

    @Test
    void reportsSizeAndCapabilities() throws IOException {
        BlockDevice rw = device(SIZE, false);
        assertEquals(SIZE, rw.size());
        assertTrue(rw.capabilities().write());
        assertTrue(rw.maxIoSize() % rw.logicalBlockSize() == 0);
        rw.close();
        BlockDevice ro = device(SIZE, true);
        assertFalse(ro.capabilities().write());
        assertFalse(ro.capabilities().trim());
    }

    @Test
    void readsBackRandomWritesOfRandomLengths() throws Exception {
        BlockDevice dev = device(SIZE, false);
        int lbs = dev.logicalBlockSize();
        byte[] model = new byte[(int) SIZE];
        Random rnd = new Random(42);
        for (int i = 0; i < 400; i++) {
            int len = lbs * (1 + rnd.nextInt(dev.maxIoSize() / lbs));
            long off = (long) lbs * rnd.nextInt((int) ((SIZE - len) / lbs) + 1);
            if (rnd.nextBoolean()) {
                byte[] data = new byte[len];
                rnd.nextBytes(data);
                await(dev.write(off, buffer(data, rnd.nextBoolean()), rnd.nextInt(4) == 0));
                System.arraycopy(data, 0, model, (int) off, len);
            } else {
                assertArrayEquals(Arrays.copyOfRange(model, (int) off, (int) off + len),
                        read(dev, off, len, rnd.nextBoolean()), "read at " + off + " len " + len);
            }
        }
        for (long off = 0; off < SIZE; off += dev.maxIoSize()) {
            int len = (int) Math.min(dev.maxIoSize(), SIZE - off);
            assertArrayEquals(Arrays.copyOfRange(model, (int) off, (int) off + len), read(dev, off, len, true));
        }
    }

    @Test
    void unwrittenBlocksReadAsZeros() throws Exception {
        BlockDevice dev = device(SIZE, false);
        int lbs = dev.logicalBlockSize();
        await(dev.write(SIZE / 2, filled(lbs, 0x5A), false));
        for (long off : new long[] {0, SIZE / 2 + lbs, SIZE - 4L * lbs}) {
            ByteBuffer dst = filled(4 * lbs, 0xFF);
            await(dev.read(off, dst));
            assertArrayEquals(new byte[4 * lbs], bytes(dst), "at " + off);
        }
    }

    @Test
    void trimmedRangeReadsAsZerosAndNeighboursSurvive() throws Exception {
        BlockDevice dev = device(SIZE, false);
        zeroingLeavesZeros(dev, Zeroing.TRIM);
    }

    @Test
    void writeZeroesZerosTheRangeOnly() throws Exception {
        BlockDevice dev = device(SIZE, false);
        zeroingLeavesZeros(dev, Zeroing.ZERO);
    }

    /** WRITE_ZEROES with NOUNMAP (RNBD protocol 2.2) zeroes exactly as without; what it keeps allocated is the backend's test. */
    @Test
    void writeZeroesWithNoUnmapZerosTheRangeOnly() throws Exception {
        BlockDevice dev = device(SIZE, false);
        zeroingLeavesZeros(dev, Zeroing.ZERO_NO_UNMAP);
    }

    /** A device that says it can erase securely leaves zeros; one that cannot says EOPNOTSUPP and touches nothing. */
    @Test
    void secureEraseZerosTheRangeOrIsNotSupported() throws Exception {
        BlockDevice dev = device(SIZE, false);
        if (dev.capabilities().secureErase()) {
            zeroingLeavesZeros(dev, Zeroing.SECURE_ERASE);
            return;
        }
        int lbs = dev.logicalBlockSize();
        await(dev.write(0, filled(lbs, 0x3C), false));
        expect(Errno.EOPNOTSUPP, dev.secureErase(0, lbs));
        assertArrayEquals(bytes(filled(lbs, 0x3C)), read(dev, 0, lbs, false));
    }

    /** The ways of zeroing a range a device has. */
    protected enum Zeroing { TRIM, ZERO, ZERO_NO_UNMAP, SECURE_ERASE }

    protected static CompletableFuture<Void> zero(BlockDevice dev, Zeroing how, long offset, long length,
                                                  boolean fua) {
        return switch (how) {
            case TRIM -> dev.trim(offset, length);
            case ZERO -> dev.writeZeroes(offset, length, fua);
            case ZERO_NO_UNMAP -> dev.writeZeroes(offset, length, fua, true);
            case SECURE_ERASE -> dev.secureErase(offset, length);
        };
    }

    private void zeroingLeavesZeros(BlockDevice dev, Zeroing how) throws Exception {
        int lbs = dev.logicalBlockSize();
        int chunk = dev.maxIoSize();
        long span = 4L * chunk;
        for (long off = 0; off < span; off += chunk) {
            await(dev.write(off, filled(chunk, 0xAB), false));
        }
        long from = lbs;
        long length = span - 3L * lbs;
        await(zero(dev, how, from, length, false));
        byte[] all = new byte[(int) span];
        for (long off = 0; off < span; off += chunk) {
            System.arraycopy(read(dev, off, chunk, false), 0, all, (int) off, chunk);
        }
        for (int i = 0; i < span; i++) {
            byte want = i >= from && i < from + length ? 0 : (byte) 0xAB;
            if (all[i] != want) {
                fail(how + ": byte " + i + " is " + all[i] + ", want " + want);
            }
        }
        // the whole device at once, far more than one IO
        await(zero(dev, how, 0, SIZE, true));
        assertArrayEquals(new byte[lbs], read(dev, 0, lbs, false));
        assertArrayEquals(new byte[lbs], read(dev, span - lbs, lbs, false));
    }

    @Test
    void outOfRangeRequestsFailWithEinvalAndTouchNothing() throws Exception {
        BlockDevice dev = device(SIZE, false);
        int lbs = dev.logicalBlockSize();
        await(dev.write(SIZE - lbs, filled(lbs, 0x11), false));
        expect(Errno.EINVAL, dev.write(SIZE - lbs, filled(2 * lbs, 0x22), false));
        expect(Errno.EINVAL, dev.write(SIZE, filled(lbs, 0x22), false));
        expect(Errno.EINVAL, dev.read(SIZE, ByteBuffer.allocate(lbs)));
        expect(Errno.EINVAL, dev.read(-lbs, ByteBuffer.allocate(lbs)));
        expect(Errno.EINVAL, dev.read(Long.MAX_VALUE - lbs + 1, ByteBuffer.allocate(lbs)));
        expect(Errno.EINVAL, dev.trim(SIZE - lbs, 2L * lbs));
        expect(Errno.EINVAL, dev.trim(lbs, Long.MAX_VALUE - lbs + 1));
        expect(Errno.EINVAL, dev.writeZeroes(SIZE - lbs, 2L * lbs, false));
        expect(Errno.EINVAL, dev.writeZeroes(0, -lbs, false));
        expect(Errno.EINVAL, dev.writeZeroes(SIZE - lbs, 2L * lbs, false, true));
        expect(Errno.EINVAL, dev.secureErase(SIZE - lbs, 2L * lbs));
        assertArrayEquals(bytes(filled(lbs, 0x11)), read(dev, SIZE - lbs, lbs, false));
    }

    @Test
    void misalignedRequestsFailWithEinval() throws Exception {
        BlockDevice dev = device(SIZE, false);
        int lbs = dev.logicalBlockSize();
        expect(Errno.EINVAL, dev.write(lbs / 2, filled(lbs, 1), false));
        expect(Errno.EINVAL, dev.write(0, filled(lbs + 1, 1), false));
        expect(Errno.EINVAL, dev.read(1, ByteBuffer.allocate(lbs)));
        expect(Errno.EINVAL, dev.read(0, ByteBuffer.allocate(lbs - 1)));
        expect(Errno.EINVAL, dev.trim(lbs / 2, lbs));
        expect(Errno.EINVAL, dev.writeZeroes(0, lbs + 1, false));
        assertArrayEquals(new byte[lbs], read(dev, 0, lbs, false));
    }

    @Test
    void requestsLargerThanMaxIoSizeFailWithEinval() throws Exception {
        BlockDevice dev = device(SIZE, false);
        int len = dev.maxIoSize() + dev.logicalBlockSize();
        expect(Errno.EINVAL, dev.write(0, filled(len, 3), false));
        expect(Errno.EINVAL, dev.read(0, ByteBuffer.allocate(len)));
    }

    @Test
    void readOnlyDeviceRefusesChangesWithErofs() throws Exception {
        BlockDevice dev = device(SIZE, true);
        int lbs = dev.logicalBlockSize();
        expect(Errno.EROFS, dev.write(0, filled(lbs, 1), false));
        expect(Errno.EROFS, dev.write(0, filled(lbs, 1), true));
        expect(Errno.EROFS, dev.trim(0, lbs));
        expect(Errno.EROFS, dev.writeZeroes(0, lbs, false));
        expect(Errno.EROFS, dev.writeZeroes(0, lbs, false, true));
        expect(Errno.EROFS, dev.secureErase(0, lbs));
        await(dev.flush());
        assertEquals(lbs, read(dev, 0, lbs, false).length);
    }

    @Test
    void concurrentWritersToDisjointRangesAllLand() throws Exception {
        BlockDevice dev = device(SIZE, false);
        int lbs = dev.logicalBlockSize();
        int writers = 8;
        int region = (int) (SIZE / writers);
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                long base = (long) w * region;
                byte tag = (byte) (w + 1);
                done.add(pool.submit(() -> {
                    List<CompletableFuture<Void>> inflight = new ArrayList<>();
                    for (int off = 0; off < region; off += 4 * lbs) {
                        inflight.add(dev.write(base + off, filled(4 * lbs, tag), false));
                    }
                    for (CompletableFuture<Void> f : inflight) {
                        await(f);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        for (int w = 0; w < writers; w++) {
            for (int off = 0; off < region; off += dev.maxIoSize()) {
                int len = Math.min(dev.maxIoSize(), region - off);
                assertArrayEquals(bytes(filled(len, w + 1)), read(dev, (long) w * region + off, len, false),
                        "writer " + w + " at " + off);
            }
        }
    }

    @Test
    void flushAndFuaComplete() throws Exception {
        BlockDevice dev = device(SIZE, false);
        int lbs = dev.logicalBlockSize();
        await(dev.write(0, filled(lbs, 9), true));
        await(dev.flush());
        assertArrayEquals(bytes(filled(lbs, 9)), read(dev, 0, lbs, false));
    }

    @Test
    void buffersKeepTheirPositions() throws Exception {
        BlockDevice dev = device(SIZE, false);
        int lbs = dev.logicalBlockSize();
        ByteBuffer src = filled(3 * lbs, 7).position(lbs);
        await(dev.write(0, src, false));
        assertEquals(lbs, src.position());
        ByteBuffer dst = ByteBuffer.allocate(3 * lbs).position(lbs);
        await(dev.read(0, dst));
        assertEquals(lbs, dst.position());
        assertEquals(7, dst.get(lbs));
        assertEquals(0, dst.get(0));
    }

    @Test
    void closedDeviceFailsWithEnodevAndClosesTwiceQuietly() throws Exception {
        BlockDevice dev = device(SIZE, false);
        int lbs = dev.logicalBlockSize();
        dev.close();
        dev.close();
        expect(Errno.ENODEV, dev.read(0, ByteBuffer.allocate(lbs)));
        expect(Errno.ENODEV, dev.write(0, filled(lbs, 1), false));
        expect(Errno.ENODEV, dev.flush());
    }

    // ---- helpers for subclasses too; expect and filled for any block-device test

    protected static void await(CompletableFuture<?> f) throws Exception {
        try {
            f.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        }
    }

    /** Asserts that {@code f} fails with a {@link BlockIoException} of {@code errno}. */
    public static void expect(int errno, CompletableFuture<?> f) {
        try {
            f.get(30, TimeUnit.SECONDS);
            fail("expected " + Errno.name(errno));
        } catch (ExecutionException e) {
            BlockIoException b = assertInstanceOf(BlockIoException.class, e.getCause());
            assertEquals(Errno.name(errno), Errno.name(b.errno()), b.getMessage());
        } catch (Exception e) {
            fail(e);
        }
    }

    protected static byte[] read(BlockDevice dev, long off, int len, boolean direct) throws Exception {
        ByteBuffer dst = direct ? ByteBuffer.allocateDirect(len) : ByteBuffer.allocate(len);
        await(dev.read(off, dst));
        return bytes(dst);
    }

    public static ByteBuffer filled(int len, int value) {
        byte[] b = new byte[len];
        Arrays.fill(b, (byte) value);
        return ByteBuffer.wrap(b);
    }

    private static ByteBuffer buffer(byte[] data, boolean direct) {
        if (!direct) {
            return ByteBuffer.wrap(data);
        }
        return ByteBuffer.allocateDirect(data.length).put(data).flip();
    }

    protected static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.limit()];
        b.duplicate().position(0).get(out);
        return out;
    }
}

package io.rnbd.testkit.block;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.SharedDevice;
import io.rnbd.rnbd.api.SharedDevice.Holder;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a {@link SharedDevice} must do for takeovers between servers to be safe: the RBD backend
 * on a real cluster and the in-memory stand-in ({@link FakeSharedBackend}) run it, so that what
 * the stand-in lets other tests conclude (the rxe guest's, rnbd-server's) holds for Ceph too.
 * Every open is another server's view of one image.
 */
public abstract class SharedDeviceContractTest {
    protected static final long SIZE = 4L << 20;
    private static final AtomicInteger IMAGES = new AtomicInteger();
    private static final int BLOCK = 4096;

    private final List<SharedDevice> opened = new ArrayList<>();

    /** A new opener of {@code image} (as another server would be), made with {@link #SIZE} bytes if new. */
    protected abstract SharedDevice openShared(String image) throws IOException;

    /** An image no other test uses. */
    protected String newImage() {
        return "shared" + IMAGES.incrementAndGet() + "-" + Long.toHexString(System.nanoTime() & 0xffffff);
    }

    protected final SharedDevice open(String image) throws IOException {
        SharedDevice d = openShared(image);
        opened.add(d);
        return d;
    }

    @AfterEach
    void closeDevices() {
        for (SharedDevice d : opened) {
            try {
                d.close();
            } catch (RuntimeException e) {
                // a fenced device closing: what matters is that it returns
            }
        }
    }

    @Test
    void aStandbyReadsWhatTheHolderWroteAndNeitherItsReadsNorItsFlushMoveTheLock() throws Exception {
        String image = newImage();
        SharedDevice a = open(image);
        SharedDevice b = open(image);
        a.takeOver("A", a.holder());
        byte[] data = pattern(1);
        await(a.write(0, ByteBuffer.wrap(data), false));

        assertArrayEquals(data, read(b, 0));
        await(b.flush());
        assertTrue(a.holds(), "the holder after a standby's read and flush");
        assertFalse(b.holds());
        assertEquals(a.identity(), b.holder().owner());
        assertEquals("A", b.holder().server());
    }

    @Test
    void aStandbyRefusesEveryChangeWithEnolinkAndNothingLands() throws Exception {
        String image = newImage();
        SharedDevice a = open(image);
        SharedDevice b = open(image);
        a.takeOver("A", a.holder());
        byte[] data = pattern(2);
        await(a.write(0, ByteBuffer.wrap(data), false));

        assertErrno(Errno.ENOLINK, b.write(0, ByteBuffer.wrap(pattern(3)), false), "a standby's write");
        assertErrno(Errno.ENOLINK, b.writeZeroes(0, BLOCK, false), "a standby's write-zeroes");
        assertErrno(Errno.ENOLINK, b.trim(0, BLOCK), "a standby's discard");
        assertArrayEquals(data, read(a, 0));
        assertTrue(a.holds());
    }

    @Test
    void theFirstTakeOverOfAnImageNobodyHoldsIsRecordedAsGenerationOne() throws Exception {
        String image = newImage();
        SharedDevice a = open(image);
        assertFalse(a.holder().held());
        long before = System.currentTimeMillis();
        Holder h = a.takeOver("A", a.holder());
        long after = System.currentTimeMillis();
        assertEquals(a.identity(), h.owner());
        assertEquals("A", h.server());
        assertEquals(1, h.generation());
        assertTrue(h.sinceMillis() >= before - 1000 && h.sinceMillis() <= after + 1000, "since " + h.sinceMillis());
        assertEquals(h, a.holder());
        assertTrue(a.holds());
        assertEquals(h, a.takeOver("A", h), "taking over what it holds changes nothing");
    }

    @Test
    void aTakeoverFencesTheLiveHolderWhoseLaterWritesNeverLand() throws Exception {
        String image = newImage();
        SharedDevice a = open(image);
        SharedDevice b = open(image);
        Holder first = a.takeOver("A", a.holder());
        await(a.write(0, ByteBuffer.wrap(pattern(4)), false));

        Holder second = b.takeOver("B", b.holder());
        assertEquals(b.identity(), second.owner());
        assertEquals(first.generation() + 1, second.generation());
        byte[] newer = pattern(5);
        await(b.write(0, ByteBuffer.wrap(newer), false));

        int errno = errnoOf(a.write(0, ByteBuffer.wrap(pattern(6)), false));
        assertTrue(errno == Errno.ESHUTDOWN || errno == Errno.ENOLINK, "the fenced holder's write: " + Errno.name(errno));
        assertFalse(holdsOrFenced(a), "the fenced holder still thinks it holds");
        assertArrayEquals(newer, read(b, 0), "the newer holder's data after the old one's write");
        assertTrue(b.holds());
    }

    @Test
    void aTakeoverThatExpectsAnotherHolderBreaksNothingAndFailsWithEagain() throws Exception {
        String image = newImage();
        SharedDevice a = open(image);
        SharedDevice b = open(image);
        SharedDevice c = open(image);
        a.takeOver("A", a.holder());
        Holder seenByB = b.holder();
        c.takeOver("C", c.holder());

        BlockIoException e = assertThrows(BlockIoException.class, () -> b.takeOver("B", seenByB));
        assertEquals(Errno.EAGAIN, e.errno(), e.getMessage());
        assertTrue(c.holds(), "the holder the stale takeover did not mean");
        assertFalse(b.holds());
    }

    @Test
    void aFencedDeviceClosesAndANewOpenIsAStandbyWithAnotherIdentity() throws Exception {
        String image = newImage();
        SharedDevice a = open(image);
        SharedDevice b = open(image);
        a.takeOver("A", a.holder());
        b.takeOver("B", b.holder());
        assertFalse(holdsOrFenced(a));
        a.close();

        SharedDevice a2 = open(image);
        assertNotEquals(a.identity(), a2.identity());
        assertFalse(a2.holds());
        byte[] data = pattern(7);
        await(b.write(BLOCK, ByteBuffer.wrap(data), false));
        assertArrayEquals(data, read(a2, BLOCK), "the reopened standby reads the holder's data");
        Holder back = a2.takeOver("A", a2.holder());
        assertEquals("A", back.server());
        assertTrue(a2.holds());
    }

    @Test
    void closingTheHolderLetsGoOfTheLockSoTheNextTakesItWithoutFencing() throws Exception {
        String image = newImage();
        SharedDevice a = open(image);
        SharedDevice b = open(image);
        Holder first = a.takeOver("A", a.holder());
        a.close();
        Holder seen = b.holder();
        assertFalse(seen.held(), "after the holder closed: " + seen);
        Holder h = b.takeOver("B", seen);
        assertEquals(first.generation() + 1, h.generation(), "generations go on after a release");
    }

    // ---- helpers

    private static boolean holdsOrFenced(SharedDevice d) {
        try {
            return d.holds();
        } catch (IOException e) {
            assertEquals(Errno.ESHUTDOWN, BlockIoException.errnoOf(e), e.getMessage());
            return false;
        }
    }

    protected static byte[] pattern(long seed) {
        byte[] b = new byte[BLOCK];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static byte[] read(SharedDevice d, long offset) throws Exception {
        ByteBuffer buf = ByteBuffer.allocateDirect(BLOCK);
        await(d.read(offset, buf));
        byte[] out = new byte[BLOCK];
        buf.duplicate().get(out);
        return out;
    }

    protected static void await(CompletableFuture<Void> f) throws Exception {
        try {
            f.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError("request failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            fail("request unanswered for 30 s");
        }
    }

    private static int errnoOf(CompletableFuture<Void> f) throws Exception {
        try {
            f.get(30, TimeUnit.SECONDS);
            return 0;
        } catch (ExecutionException e) {
            return BlockIoException.errnoOf(e.getCause());
        }
    }

    private static void assertErrno(int errno, CompletableFuture<Void> f, String what) throws Exception {
        assertEquals(Errno.name(errno), Errno.name(errnoOf(f)), what);
    }
}

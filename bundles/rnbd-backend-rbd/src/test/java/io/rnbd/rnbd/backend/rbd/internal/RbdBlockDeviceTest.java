package io.rnbd.rnbd.backend.rbd.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockRequests;
import io.rnbd.rnbd.api.SizeWatch;
import io.rnbd.testkit.Await;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The device's own logic on a scripted image: completions, closing, size changes, FUA. */
class RbdBlockDeviceTest {
    private static final long SIZE = 1 << 20;
    private final ScriptedImage image = new ScriptedImage(SIZE);
    private final CountDownLatch released = new CountDownLatch(1);
    private RbdBlockDevice dev = device(RbdBlockDevice.Fua.FLAG);

    private RbdBlockDevice device(RbdBlockDevice.Fua fua) {
        return new RbdBlockDevice(image, "rbd/test", SIZE, false, fua, d -> released.countDown());
    }

    @AfterEach
    void closeDevice() throws InterruptedException {
        dev.beginClose();
        for (ScriptedImage.Op op : image.submitted) {
            image.complete(op, 0);
        }
        dev.poller().join(5000);
    }

    private static Throwable failure(CompletableFuture<?> f) throws Exception {
        try {
            f.get(5, TimeUnit.SECONDS);
            throw new AssertionError("completed normally");
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    @Test
    void aCompletionCompletesItsFutureOnLibrbdsThreadNotTheSubmitters() throws Exception {
        AtomicReference<String> thread = new AtomicReference<>();
        CompletableFuture<Void> f = dev.write(512, ByteBuffer.allocateDirect(1024), false)
                .whenComplete((v, t) -> thread.set(Thread.currentThread().getName()));
        ScriptedImage.Op op = image.last(1);
        assertEquals(RbdNative.OP_WRITE, op.op());
        assertEquals(512, op.offset());
        assertEquals(1024, op.length());
        assertEquals(0, op.flags());
        assertFalse(f.isDone(), "completed before librbd answered");
        image.complete(op, 0);
        f.get(5, TimeUnit.SECONDS);
        assertEquals("librbd-callback", thread.get());
        assertEquals(0, dev.inflight());
    }

    @Test
    void aDirectBufferGoesToLibrbdAsItIsAndAHeapOneIsCopiedBackOnSuccess() throws Exception {
        ByteBuffer direct = ByteBuffer.allocateDirect(2048).position(512).limit(1536);
        CompletableFuture<Void> d = dev.read(0, direct);
        ScriptedImage.Op op = image.last(1);
        assertEquals(direct.position(), op.buf().position(), "the caller's window, no copy");
        assertEquals(1024, op.buf().remaining());
        op.buf().duplicate().put(new byte[] {1, 2, 3});
        image.complete(op, 1024);
        d.get(5, TimeUnit.SECONDS);
        assertEquals(512, direct.position(), "position moved");
        assertEquals(3, direct.get(514));

        ByteBuffer heap = ByteBuffer.allocate(1024);
        CompletableFuture<Void> h = dev.read(0, heap);
        ScriptedImage.Op hop = image.last(2);
        assertTrue(hop.buf().isDirect());
        hop.buf().duplicate().put(new byte[] {9, 8, 7});
        image.complete(hop, 1024);
        h.get(5, TimeUnit.SECONDS);
        assertEquals(0, heap.position());
        assertArrayEquals(new byte[] {9, 8, 7}, new byte[] {heap.get(0), heap.get(1), heap.get(2)});
    }

    @Test
    void librbdErrorsBecomeBlockIoExceptionsWithTheirErrnoAndAReason() throws Exception {
        CompletableFuture<Void> t = dev.flush();
        image.complete(image.last(1), -Errno.ETIMEDOUT);
        BlockIoException e = assertInstanceOf(BlockIoException.class, failure(t));
        assertEquals(Errno.ETIMEDOUT, e.errno());
        assertEquals("ETIMEDOUT: rbd/test: flush at 0+0 failed (no answer from the cluster within op.timeout.sec)",
                e.getMessage());

        CompletableFuture<Void> fenced = dev.write(0, ByteBuffer.allocateDirect(512), false);
        image.complete(image.last(2), -Errno.ESHUTDOWN);
        BlockIoException f = assertInstanceOf(BlockIoException.class, failure(fenced));
        assertEquals(Errno.ESHUTDOWN, f.errno());
        assertTrue(f.getMessage().contains("fenced: another client took the image's exclusive lock"), f.getMessage());
    }

    @Test
    void aSubmissionLibrbdRefusesFailsAtOnceAndLeavesNothingPending() throws Exception {
        image.failSubmit = Errno.ENOMEM;
        BlockIoException e = assertInstanceOf(BlockIoException.class,
                failure(dev.trim(0, 4096)));
        assertEquals(Errno.ENOMEM, e.errno());
        assertEquals(0, dev.inflight());
    }

    @Test
    void closingFailsNewIoAtOnceWaitsForIoInFlightThenClosesTheImage() throws Exception {
        CompletableFuture<Void> inflight = dev.write(0, ByteBuffer.allocateDirect(4096), false);
        ScriptedImage.Op op = image.last(1);
        dev.beginClose();
        BlockIoException e = assertInstanceOf(BlockIoException.class,
                failure(dev.read(0, ByteBuffer.allocateDirect(512))));
        assertEquals(Errno.ENODEV, e.errno());
        assertFalse(dev.awaitClosed(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200)),
                "closed with IO in flight");
        assertEquals(1, image.closed.getCount(), "image closed under IO in flight");
        assertFalse(inflight.isDone(), "IO in flight failed before librbd let go of its buffer");
        image.complete(op, 0);
        inflight.get(5, TimeUnit.SECONDS);
        assertTrue(dev.awaitClosed(System.nanoTime() + TimeUnit.SECONDS.toNanos(5)));
        assertTrue(image.freed.await(5, TimeUnit.SECONDS));
        assertTrue(released.await(5, TimeUnit.SECONDS));
        assertFalse(image.closedBeforeIdle);
        assertFalse(dev.poller().isAlive());
        dev.close();
    }

    @Test
    void aHeaderChangeUpdatesTheSizeAndTellsTheWatchersUntilTheyStop() throws Exception {
        // IO is checked against the size the device reports, as rnbd-server checks it
        BlockDevice checked = BlockRequests.checked(dev);
        BlockingQueue<Long> seen = new LinkedBlockingQueue<>();
        SizeWatch failing = dev.watchSize(s -> {
            throw new IllegalStateException("a broken listener");
        });
        SizeWatch watch = dev.watchSize(seen::add);
        image.headerChanged(2 * SIZE);
        assertEquals(2 * SIZE, seen.poll(5, TimeUnit.SECONDS));
        assertEquals(2 * SIZE, dev.size());
        CompletableFuture<Void> beyondOld = checked.write(SIZE + 512, ByteBuffer.allocateDirect(512), false);
        image.complete(image.last(1), 0);
        beyondOld.get(5, TimeUnit.SECONDS);

        image.headerChanged(2 * SIZE); // a snapshot, say: same size, nobody told
        image.headerChanged(SIZE / 2 + 100); // not a multiple of 512: the device rounds down
        assertEquals(SIZE / 2, seen.poll(5, TimeUnit.SECONDS));
        BlockIoException e = assertInstanceOf(BlockIoException.class,
                failure(checked.read(SIZE / 2, ByteBuffer.allocateDirect(512))));
        assertEquals(Errno.EINVAL, e.errno());

        watch.close();
        failing.close();
        image.headerChanged(SIZE);
        // the poller applies it; nothing else to wait on once the watch is gone
        Await.until(() -> "the size back to " + SIZE + ": " + dev.size(), () -> dev.size() == SIZE,
                Duration.ofSeconds(5));
        assertNull(seen.poll(), "closed watch called");
    }

    @Test
    void fuaIsTheOpFlagOrAWriteThenAFlush() throws Exception {
        CompletableFuture<Void> flagged = dev.write(0, ByteBuffer.allocateDirect(512), true);
        assertEquals(RbdNative.FLAG_FUA, image.last(1).flags());
        image.complete(image.last(1), 0);
        flagged.get(5, TimeUnit.SECONDS);
        dev.close();

        dev = device(RbdBlockDevice.Fua.FLUSH);
        CompletableFuture<Void> f = dev.writeZeroes(0, 4096, true);
        ScriptedImage.Op zero = image.last(2);
        assertEquals(RbdNative.OP_WRITE_ZEROES, zero.op());
        assertEquals(0, zero.flags());
        image.complete(zero, 0);
        ScriptedImage.Op flush = image.last(3);
        assertEquals(RbdNative.OP_FLUSH, flush.op(), "flush after the write completed");
        assertFalse(f.isDone(), "FUA done before its flush");
        image.complete(flush, 0);
        f.get(5, TimeUnit.SECONDS);
    }

    @Test
    void completionsWithoutAListenerComeThroughThePoller() throws Exception {
        image.listen(null);
        AtomicReference<String> thread = new AtomicReference<>();
        CompletableFuture<Void> f = dev.flush().whenComplete((v, t) -> thread.set(Thread.currentThread().getName()));
        image.complete(image.last(1), 0);
        f.get(5, TimeUnit.SECONDS);
        assertEquals("rnbd-rbd-rbd/test", thread.get());
    }

    @Test
    void closingFromACompletionDoesNotWaitForItself() throws Exception {
        CompletableFuture<Void> f = dev.flush();
        CompletableFuture<Void> closedFromPoller = f.thenRun(dev::close);
        image.complete(image.last(1), 0);
        closedFromPoller.get(5, TimeUnit.SECONDS);
        assertTrue(released.await(5, TimeUnit.SECONDS));
        assertSame(null, closedFromPoller.getNow(null));
    }
}

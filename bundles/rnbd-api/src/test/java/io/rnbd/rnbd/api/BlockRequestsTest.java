package io.rnbd.rnbd.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongConsumer;
import org.junit.jupiter.api.Test;

/** The check itself; the backends' contract test drives every backend through it. */
class BlockRequestsTest {
    private static final int MAX = 128 << 10;

    @Test
    void boundsAreAlignmentMaxIoAndTheEnd() {
        assertNull(BlockRequests.outOfBounds(0, 512, true, 1 << 20, 512, MAX));
        assertNull(BlockRequests.outOfBounds((1 << 20) - 512, 512, true, 1 << 20, 512, MAX));
        assertNull(BlockRequests.outOfBounds(0, 1 << 20, false, 1 << 20, 512, MAX), "discard takes any length");
        assertEquals(Errno.EINVAL, BlockRequests.outOfBounds(1, 512, true, 1 << 20, 512, MAX).errno());
        assertEquals(Errno.EINVAL, BlockRequests.outOfBounds(0, 511, true, 1 << 20, 512, MAX).errno());
        assertEquals(Errno.EINVAL, BlockRequests.outOfBounds(-512, 512, true, 1 << 20, 512, MAX).errno());
        assertEquals(Errno.EINVAL, BlockRequests.outOfBounds(0, MAX + 512, true, 1 << 20, 512, MAX).errno());
        assertEquals(Errno.EINVAL, BlockRequests.outOfBounds(1 << 20, 512, false, 1 << 20, 512, MAX).errno());
        assertEquals(Errno.EINVAL, BlockRequests.outOfBounds(Long.MAX_VALUE - 511, 512, true, 1 << 20, 512, MAX)
                .errno(), "no overflow past the end");
    }

    @Test
    void whatTheCheckRefusesNeverReachesTheDeviceAndTheSizeFollowsItsWatch() throws Exception {
        Counting dev = new Counting(false);
        BlockDevice checked = BlockRequests.checked(dev);
        assertEquals(Errno.EINVAL, errno(checked.write(1 << 20, ByteBuffer.allocate(512), false)));
        assertEquals(0, dev.calls.get());
        checked.write(0, ByteBuffer.allocate(512), false).get();
        assertEquals(1, dev.calls.get());
        dev.grow(2 << 20);
        checked.write(1 << 20, ByteBuffer.allocate(512), false).get();
        assertEquals(2, dev.calls.get());

        BlockDevice ro = BlockRequests.checked(new Counting(true));
        assertEquals(Errno.EROFS, errno(ro.trim(0, 512)));
        assertEquals(Errno.EROFS, errno(ro.writeZeroes(0, 512, false)));
        ro.read(0, ByteBuffer.allocate(512)).get();
    }

    private static int errno(CompletableFuture<Void> f) {
        assertTrue(f.isCompletedExceptionally());
        return BlockIoException.errnoOf(f.handle((v, t) -> t).join());
    }

    /** A device that counts what reaches it and reports its size changes. */
    private static final class Counting implements BlockDevice {
        final AtomicInteger calls = new AtomicInteger();
        private final boolean readOnly;
        private volatile long size = 1 << 20;
        private LongConsumer watcher = s -> { };

        Counting(boolean readOnly) {
            this.readOnly = readOnly;
        }

        void grow(long bytes) {
            size = bytes;
            watcher.accept(bytes);
        }

        @Override
        public long size() {
            return size;
        }

        @Override
        public Capabilities capabilities() {
            return readOnly ? Capabilities.READ_ONLY : new Capabilities(true, true, true, true, true, true);
        }

        @Override
        public SizeWatch watchSize(LongConsumer listener) {
            watcher = listener;
            return SizeWatch.NONE;
        }

        private CompletableFuture<Void> done() {
            calls.incrementAndGet();
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
            return done();
        }

        @Override
        public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
            return done();
        }

        @Override
        public CompletableFuture<Void> flush() {
            return done();
        }

        @Override
        public CompletableFuture<Void> trim(long offset, long length) {
            return done();
        }

        @Override
        public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
            return done();
        }

        @Override
        public void close() {
        }
    }
}

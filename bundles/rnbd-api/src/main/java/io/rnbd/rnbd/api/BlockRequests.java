package io.rnbd.rnbd.api;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongConsumer;

/**
 * The one check of a block request, made above the backends as nbdkit's server core makes it
 * for its plugins: offsets and lengths aligned to the logical block, a READ or WRITE no
 * larger than the largest IO, nothing beyond the end, no change to a read-only device. A
 * device a {@link BlockBackend} opens trusts its caller and checks none of that again (only
 * whether it is closed, which it alone knows). rnbd-server checks every RNBD IO against the
 * export's geometry with {@link #outOfBounds}; whoever else drives a backend's device (the
 * load generator, benchmarks, tests) opens it through {@link #checked}.
 *
 * @since 1.7
 */
public final class BlockRequests {
    private BlockRequests() {
    }

    /**
     * Why {@code length} bytes at {@code offset} may not reach a device of {@code size} bytes,
     * or null if they may: EINVAL for a negative or misaligned offset or length, a READ or
     * WRITE ({@code data}) longer than {@code maxIoSize}, or a range beyond the end. DISCARD
     * and WRITE_ZEROES take any length. Allocates nothing unless it refuses.
     */
    public static BlockIoException outOfBounds(long offset, long length, boolean data, long size, int blockSize,
                                               int maxIoSize) {
        if (offset < 0 || length < 0 || offset % blockSize != 0 || length % blockSize != 0) {
            return new BlockIoException(Errno.EINVAL, "offset " + offset + " length " + length
                    + " not aligned to " + blockSize);
        }
        if (data && length > maxIoSize) {
            return new BlockIoException(Errno.EINVAL, "length " + length + " exceeds max IO size " + maxIoSize);
        }
        if (offset > size - length) {
            return new BlockIoException(Errno.EINVAL, "offset " + offset + " length " + length
                    + " beyond device size " + size);
        }
        return null;
    }

    /**
     * {@code device} with every request checked before it gets it: what fails the check
     * completes exceptionally with its {@link BlockIoException} (EROFS, EINVAL) and never
     * reaches the device. The size checked against is the device's as its
     * {@link BlockDevice#watchSize} reports it, so a check costs no call into the device.
     */
    public static BlockDevice checked(BlockDevice device) {
        return new Checked(device);
    }

    /** A filter in nbdkit's sense: it wraps {@code next} and stops what next must not see. */
    private static final class Checked implements BlockDevice {
        private final BlockDevice next;
        private final int blockSize;
        private final int maxIoSize;
        private final boolean writable;
        private final SizeWatch watch;
        private volatile long size;

        Checked(BlockDevice next) {
            this.next = next;
            this.blockSize = next.logicalBlockSize();
            this.maxIoSize = next.maxIoSize();
            this.writable = next.capabilities().write();
            this.watch = next.watchSize(bytes -> size = bytes);
            this.size = next.size();
        }

        private BlockIoException refusal(long offset, long length, boolean change, boolean data) {
            if (change && !writable) {
                return new BlockIoException(Errno.EROFS, "device is read-only");
            }
            return outOfBounds(offset, length, data, size, blockSize, maxIoSize);
        }

        @Override
        public long size() {
            return next.size();
        }

        @Override
        public int logicalBlockSize() {
            return blockSize;
        }

        @Override
        public int physicalBlockSize() {
            return next.physicalBlockSize();
        }

        @Override
        public int maxIoSize() {
            return maxIoSize;
        }

        @Override
        public Capabilities capabilities() {
            return next.capabilities();
        }

        @Override
        public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
            BlockIoException bad = refusal(offset, dst.remaining(), false, true);
            return bad != null ? CompletableFuture.failedFuture(bad) : next.read(offset, dst);
        }

        @Override
        public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
            BlockIoException bad = refusal(offset, src.remaining(), true, true);
            return bad != null ? CompletableFuture.failedFuture(bad) : next.write(offset, src, fua);
        }

        @Override
        public CompletableFuture<Void> flush() {
            return next.flush();
        }

        @Override
        public CompletableFuture<Void> trim(long offset, long length) {
            BlockIoException bad = refusal(offset, length, true, false);
            return bad != null ? CompletableFuture.failedFuture(bad) : next.trim(offset, length);
        }

        @Override
        public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
            BlockIoException bad = refusal(offset, length, true, false);
            return bad != null ? CompletableFuture.failedFuture(bad) : next.writeZeroes(offset, length, fua);
        }

        @Override
        public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua, boolean noUnmap) {
            BlockIoException bad = refusal(offset, length, true, false);
            return bad != null ? CompletableFuture.failedFuture(bad) : next.writeZeroes(offset, length, fua, noUnmap);
        }

        @Override
        public CompletableFuture<Void> secureErase(long offset, long length) {
            BlockIoException bad = refusal(offset, length, true, false);
            return bad != null ? CompletableFuture.failedFuture(bad) : next.secureErase(offset, length);
        }

        @Override
        public BlockPlug plug() {
            return next.plug();
        }

        @Override
        public SizeWatch watchSize(LongConsumer listener) {
            return next.watchSize(listener);
        }

        /** A device that reports no size changes ({@link SizeWatch#NONE}) still changes by this hand. */
        @Override
        public CompletableFuture<Void> resize(long bytes) {
            return next.resize(bytes).thenRun(() -> size = next.size());
        }

        @Override
        public void close() {
            watch.close();
            next.close();
        }
    }
}

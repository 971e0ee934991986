package io.rnbd.rnbd.api;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongConsumer;

/**
 * A block device: byte-addressed here, every offset and length a multiple of
 * {@link #logicalBlockSize()}. Operations are asynchronous; a failed one completes its
 * future exceptionally with a {@link BlockIoException}. Out-of-range, misaligned and
 * unsupported requests fail (EINVAL, EOPNOTSUPP, EROFS) without touching data: a device a
 * {@link BlockBackend} opens leaves that check to its caller, which makes it once for every
 * backend ({@link BlockRequests}), as nbdkit's server does for its plugins.
 */
public interface BlockDevice extends AutoCloseable {
    /** Size in bytes. */
    long size();

    default int logicalBlockSize() {
        return 512;
    }

    default int physicalBlockSize() {
        return 4096;
    }

    /** Largest single request in bytes. */
    default int maxIoSize() {
        return 128 * 1024;
    }

    Capabilities capabilities();

    /** Fill {@code dst} (position..limit) from {@code offset}. */
    CompletableFuture<Void> read(long offset, ByteBuffer dst);

    /** Write {@code src} (position..limit) at {@code offset}; durable on completion if {@code fua}. */
    CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua);

    /** Make every completed write durable. */
    CompletableFuture<Void> flush();

    /** Discard: the range reads as zeros afterwards. */
    CompletableFuture<Void> trim(long offset, long length);

    /**
     * Zero the range (as efficiently as the device can). The device may unmap the range as it
     * zeroes it (punch a hole, free pages), as Linux's REQ_OP_WRITE_ZEROES without REQ_NOUNMAP:
     * {@link #writeZeroes(long, long, boolean, boolean)} with {@code noUnmap} keeps it allocated.
     */
    CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua);

    /**
     * Zero the range; with {@code noUnmap} (RNBD_F_NOUNMAP, Linux's REQ_NOUNMAP, NBD's NO_HOLE)
     * the range must stay allocated, so that writing it later cannot fail for want of space;
     * without, as {@link #writeZeroes(long, long, boolean)}. The default keeps that promise for
     * any device: with {@code noUnmap} it writes zero buffers of {@link #maxIoSize()}, which a
     * device with a zeroing of its own that keeps the range allocated
     * ({@code fallocate(FALLOC_FL_ZERO_RANGE)}, {@code rbd_write_zeroes} thick) overrides.
     *
     * @since 1.8
     */
    default CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua, boolean noUnmap) {
        if (!noUnmap) {
            return writeZeroes(offset, length, fua);
        }
        if (length <= 0) {
            return CompletableFuture.completedFuture(null);
        }
        // one piece in flight, all of them from one buffer: a large range costs one buffer
        int max = BlockSplit.maxPiece(maxIoSize(), logicalBlockSize());
        ByteBuffer zeros = ByteBuffer.allocateDirect((int) Math.min(length, max)).asReadOnlyBuffer();
        return BlockSplit.run(offset, length, max, 1, (at, n, pos) -> write(at, BlockSplit.slice(zeros, 0, n), fua));
    }

    /**
     * Erase the range securely (Linux's REQ_OP_SECURE_ERASE): afterwards it reads as zeros and
     * its old contents cannot be read back from the storage either. Only a device whose
     * {@link Capabilities#secureErase()} is true can; the default fails with EOPNOTSUPP.
     *
     * @since 1.8
     */
    default CompletableFuture<Void> secureErase(long offset, long length) {
        return CompletableFuture.failedFuture(new BlockIoException(io.rnbd.common.Errno.EOPNOTSUPP,
                "this device cannot erase securely"));
    }

    /**
     * Hold back what this thread submits until the returned plug is closed, then send it
     * together ({@link BlockPlug}). A device that gains nothing from batches, and a thread
     * that already holds a plug on this device, get {@link BlockPlug#NONE}.
     */
    default BlockPlug plug() {
        return BlockPlug.NONE;
    }

    /**
     * Be told when the size changes behind the device's back (an {@code rbd resize} from
     * Ceph's command line, say): {@code listener} gets the new size in bytes, on a thread of
     * the device, once {@link #size()} returns it; it must not block. The default never
     * calls: a device whose size changes only by its owner's hand has nothing to report.
     */
    default SizeWatch watchSize(LongConsumer listener) {
        return SizeWatch.NONE;
    }

    /**
     * Grow or shrink the storage to {@code bytes} (a multiple of the logical block size); on
     * success {@link #size()} returns it and watchers ({@link #watchSize}) are told. What lies
     * beyond the old end reads as zeros. The default cannot: EOPNOTSUPP.
     *
     * @since 1.6
     */
    default CompletableFuture<Void> resize(long bytes) {
        return CompletableFuture.failedFuture(new BlockIoException(io.rnbd.common.Errno.EOPNOTSUPP,
                "this device cannot be resized"));
    }

    /**
     * Let the device go: its requests fail (ENODEV) from now on. What the storage holds stays:
     * a file's data, an image's, and a memory export's pages, which its backend keeps for the
     * export's next open until the export is removed ({@link BlockBackend#release}).
     */
    @Override
    void close();
}

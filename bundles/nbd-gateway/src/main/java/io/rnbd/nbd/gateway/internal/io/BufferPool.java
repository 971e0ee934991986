package io.rnbd.nbd.gateway.internal.io;

import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Direct buffers in power-of-two size classes, reused across requests and connections; at most
 * {@code maxCachedBytes} are kept idle, the rest are left to the GC.
 */
public final class BufferPool {
    private static final int MIN_SHIFT = 12;
    private final int maxShift;
    private final long maxCachedBytes;
    private final AtomicLong cachedBytes = new AtomicLong();
    private final ConcurrentLinkedDeque<ByteBuffer>[] free;

    @SuppressWarnings("unchecked")
    public BufferPool(int maxBufferSize, long maxCachedBytes) {
        this.maxShift = shiftFor(maxBufferSize);
        this.maxCachedBytes = maxCachedBytes;
        this.free = new ConcurrentLinkedDeque[maxShift + 1];
        for (int i = MIN_SHIFT; i <= maxShift; i++) {
            free[i] = new ConcurrentLinkedDeque<>();
        }
    }

    /** A buffer with position 0 and limit {@code size}. */
    public ByteBuffer acquire(int size) {
        int shift = shiftFor(size);
        if (shift > maxShift) {
            throw new IllegalArgumentException("buffer of " + size + " bytes exceeds the pool's maximum");
        }
        ByteBuffer b = free[shift].pollFirst();
        if (b != null) {
            cachedBytes.addAndGet(-b.capacity());
            b.clear();
        } else {
            b = ByteBuffer.allocateDirect(1 << shift);
        }
        return b.limit(size);
    }

    public void release(ByteBuffer b) {
        int shift = Integer.numberOfTrailingZeros(b.capacity());
        if (b.capacity() != 1 << shift || shift < MIN_SHIFT || shift > maxShift || !b.isDirect()) {
            throw new IllegalArgumentException("not a buffer of this pool");
        }
        if (cachedBytes.addAndGet(b.capacity()) <= maxCachedBytes) {
            free[shift].offerFirst(b);
        } else {
            cachedBytes.addAndGet(-b.capacity());
        }
    }

    public long cachedBytes() {
        return cachedBytes.get();
    }

    private static int shiftFor(int size) {
        if (size <= 0) {
            throw new IllegalArgumentException("buffer size " + size);
        }
        return Math.max(MIN_SHIFT, 32 - Integer.numberOfLeadingZeros(size - 1));
    }
}

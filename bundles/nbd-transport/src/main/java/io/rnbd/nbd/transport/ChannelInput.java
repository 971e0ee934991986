package io.rnbd.nbd.transport;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;

/**
 * Buffered blocking reads from a channel: one read() fetches many small headers at once, large
 * payloads go straight into their destination buffer.
 */
public final class ChannelInput {
    private static final int DIRECT_READ_THRESHOLD = 32 * 1024;
    private final ReadableByteChannel ch;
    private final ByteBuffer buf;
    private ReadWaiter waiter;

    /** Blocks until a non-blocking channel has bytes to read (or is closed). */
    @FunctionalInterface
    public interface ReadWaiter {
        void awaitReadable() throws IOException;
    }

    public ChannelInput(ReadableByteChannel ch, int capacity) {
        this.ch = ch;
        this.buf = ByteBuffer.allocateDirect(capacity);
        buf.limit(0);
    }

    /**
     * For a channel in non-blocking mode: how to wait when a read returns nothing. Bytes already
     * staged stay.
     */
    public void nonBlocking(ReadWaiter w) {
        this.waiter = w;
    }

    private int read(ByteBuffer dst) throws IOException {
        while (true) {
            int n = ch.read(dst);
            if (n != 0 || waiter == null || !dst.hasRemaining()) {
                return n;
            }
            waiter.awaitReadable();
        }
    }

    /**
     * The staging buffer with at least {@code n} unread bytes at its position.
     *
     * @throws EOFException if the stream ends first
     */
    public ByteBuffer need(int n) throws IOException {
        if (!await(n)) {
            throw new EOFException("connection closed by peer");
        }
        return buf;
    }

    /** Bytes already read from the channel and not yet consumed: what can be taken without waiting. */
    public int buffered() {
        return buf.remaining();
    }

    /** Waits for {@code n} bytes; false on a clean end of stream before the first of them. */
    public boolean await(int n) throws IOException {
        if (n > buf.capacity()) {
            throw new IllegalArgumentException(n + " bytes exceed the staging buffer");
        }
        if (buf.remaining() >= n) {
            return true;
        }
        buf.compact();
        try {
            while (buf.position() < n) {
                if (read(buf) < 0) {
                    if (buf.position() == 0) {
                        return false;
                    }
                    throw new EOFException("connection closed in the middle of a message");
                }
            }
        } finally {
            buf.flip();
        }
        return true;
    }

    /** Fills {@code dst} (position..limit) completely. */
    public void readFully(ByteBuffer dst) throws IOException {
        while (dst.hasRemaining()) {
            if (buf.hasRemaining()) {
                int n = Math.min(buf.remaining(), dst.remaining());
                dst.put(buf.slice(buf.position(), n));
                buf.position(buf.position() + n);
            } else if (dst.remaining() >= DIRECT_READ_THRESHOLD) {
                if (read(dst) < 0) {
                    throw new EOFException("connection closed in the middle of a payload");
                }
            } else {
                need(1);
            }
        }
    }

    /** Reads and drops {@code n} bytes. */
    public void skip(long n) throws IOException {
        while (n > 0) {
            if (!buf.hasRemaining()) {
                need(1);
            }
            int k = (int) Math.min(n, buf.remaining());
            buf.position(buf.position() + k);
            n -= k;
        }
    }
}

package io.rnbd.nbd.gateway.internal.io;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.GatheringByteChannel;

/**
 * A blocking byte channel over a stream pair (the TLS socket after NBD_OPT_STARTTLS), so the
 * connection's reader and writer use one code path with or without TLS. A gathering write is
 * copied into one array and written at once: each {@code OutputStream.write} of a TLS socket
 * becomes at least one TLS record, and a reply header alone in a record would cost a record
 * (and a syscall) per reply.
 */
public final class StreamChannel implements ByteChannel, GatheringByteChannel {
    private static final int CHUNK = 64 * 1024;
    private final InputStream in;
    private final OutputStream out;
    private final AutoCloseable resource;
    // Each used by one thread only: the reader reads, the writer writes.
    private final byte[] readBuf = new byte[CHUNK];
    private final byte[] writeBuf = new byte[CHUNK];
    private volatile boolean open = true;

    public StreamChannel(InputStream in, OutputStream out, AutoCloseable resource) {
        this.in = in;
        this.out = out;
        this.resource = resource;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        ensureOpen();
        if (!dst.hasRemaining()) {
            return 0;
        }
        if (dst.hasArray()) {
            int n = in.read(dst.array(), dst.arrayOffset() + dst.position(), dst.remaining());
            if (n > 0) {
                dst.position(dst.position() + n);
            }
            return n;
        }
        int n = in.read(readBuf, 0, Math.min(readBuf.length, dst.remaining()));
        if (n > 0) {
            dst.put(readBuf, 0, n);
        }
        return n;
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        return (int) write(new ByteBuffer[] {src}, 0, 1);
    }

    @Override
    public long write(ByteBuffer[] srcs) throws IOException {
        return write(srcs, 0, srcs.length);
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        ensureOpen();
        long total = 0;
        int fill = 0;
        for (int i = offset; i < offset + length; i++) {
            ByteBuffer b = srcs[i];
            while (b.hasRemaining()) {
                int n = Math.min(b.remaining(), writeBuf.length - fill);
                b.get(writeBuf, fill, n);
                fill += n;
                total += n;
                if (fill == writeBuf.length) {
                    out.write(writeBuf, 0, fill);
                    fill = 0;
                }
            }
        }
        if (fill > 0) {
            out.write(writeBuf, 0, fill);
        }
        out.flush();
        return total;
    }

    private void ensureOpen() throws ClosedChannelException {
        if (!open) {
            throw new ClosedChannelException();
        }
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public void close() throws IOException {
        open = false;
        try {
            resource.close();
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(e);
        }
    }
}

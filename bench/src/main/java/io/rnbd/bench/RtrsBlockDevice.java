package io.rnbd.bench;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockPlug;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.Capabilities;
import io.rnbd.rtrs.api.RtrsClientSession;
import io.rnbd.rtrs.api.RtrsPlug;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.api.RtrsServerRequest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;

/**
 * Raw RTRS as a {@link BlockDevice}, so the rnbd load generator can drive the transport without
 * RNBD on top: the user header is the 8-byte offset, the server side ({@link Ops}) copies to or
 * from one direct buffer. Only read and write exist.
 */
final class RtrsBlockDevice implements BlockDevice {
    private final RtrsClientSession session;
    private final long size;
    private final int maxIo;

    RtrsBlockDevice(RtrsClientSession session, long size) {
        this.session = session;
        this.size = size;
        this.maxIo = Math.min(session.maxIoSize(), 128 * 1024);
    }

    @Override
    public BlockPlug plug() {
        RtrsPlug p = session.plug();
        return p == RtrsPlug.NONE ? BlockPlug.NONE : p::close;
    }

    private static ByteBuffer header(long offset) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, offset);
    }

    private static CompletableFuture<Void> future(CompletableFuture<Void> f, int errno) {
        if (errno == 0) {
            f.complete(null);
        } else {
            f.completeExceptionally(new BlockIoException(errno, "rtrs errno " + errno));
        }
        return f;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public int maxIoSize() {
        return maxIo;
    }

    @Override
    public Capabilities capabilities() {
        return new Capabilities(true, false, false, false, false, true);
    }

    @Override
    public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        session.read(header(offset), dst, errno -> future(f, errno));
        return f;
    }

    @Override
    public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        session.write(header(offset), src, errno -> future(f, errno));
        return f;
    }

    @Override
    public CompletableFuture<Void> flush() {
        return CompletableFuture.failedFuture(new BlockIoException(Errno.EOPNOTSUPP, "no flush"));
    }

    @Override
    public CompletableFuture<Void> trim(long offset, long length) {
        return flush();
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
        return flush();
    }

    @Override
    public void close() {
    }

    /** The server's upper layer: one direct buffer as the disk, completed inline. */
    static final class Ops implements RtrsServerOps {
        private final ByteBuffer disk;

        Ops(int size) {
            disk = ByteBuffer.allocateDirect(size);
        }

        @Override
        public void onRequest(RtrsServerRequest r) {
            ByteBuffer h = r.userHeader();
            if (h.remaining() != 8) {
                r.complete(Errno.EINVAL);
                return;
            }
            long off = h.order(ByteOrder.LITTLE_ENDIAN).getLong(h.position());
            ByteBuffer d = r.data();
            if (off < 0 || off + d.remaining() > disk.capacity()) {
                r.complete(Errno.EINVAL);
                return;
            }
            if (r.isWrite()) {
                disk.put((int) off, d, d.position(), d.remaining());
            } else {
                d.put(d.position(), disk, (int) off, d.remaining());
            }
            r.complete(0);
        }
    }
}

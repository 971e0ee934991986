package io.rnbd.rnbd.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockPlug;
import io.rnbd.rnbd.api.BlockSplit;
import io.rnbd.rnbd.api.BlockStats;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceState;
import io.rnbd.rnbd.proto.Io;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToIntFunction;

/**
 * The IO path of one mapped device: checks a request against the device's geometry, cuts
 * it into {@link Piece}s of the device's limits under one plug, and completes it when all
 * its pieces have. Where each piece goes (sent, held for an OPEN, failed) is the device's
 * state machine's call: {@link RnbdClientDevice#submit}.
 */
final class DeviceIo {
    /** The payload of a request without data. */
    static final ByteBuffer NO_DATA = ByteBuffer.allocate(0).asReadOnlyBuffer();

    private final RnbdClientDevice device;
    private final String name;
    private final BlockStats stats;

    DeviceIo(RnbdClientDevice device, BlockStats stats) {
        this.device = device;
        this.name = device.name();
        this.stats = stats;
    }

    CompletableFuture<Void> read(long offset, ByteBuffer dst) {
        return split(Io.OP_READ, 0, offset, dst.remaining(), dst, g -> g.maxIoSize());
    }

    CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
        return split(Io.OP_WRITE, fua ? Io.F_FUA : 0, offset, src.remaining(), src, g -> g.maxIoSize());
    }

    CompletableFuture<Void> flush() {
        Request r = start(Io.OP_FLUSH, 1, 0);
        if (!r.future.isDone()) {
            device.submit(new Piece(device, r, Io.OP_FLUSH, 0, 0, 0, NO_DATA));
        }
        return r.future;
    }

    CompletableFuture<Void> trim(long offset, long length) {
        DeviceGeometry g = device.geometry();
        if (!g.caps().trim()) {
            return failed(Errno.EOPNOTSUPP, "device " + name + " cannot discard");
        }
        return split(Io.OP_DISCARD, 0, offset, length, null, DeviceGeometry::maxDiscardBytes);
    }

    /**
     * WRITE_ZEROES, with NOUNMAP when the range must stay allocated (protocol 2.2). A Linux
     * server of 6.12 or older ignores the flag (its rnbd_to_bio_flags knows only SYNC and
     * FUA) and may unmap; only the major version travels, so the client cannot tell.
     */
    CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua, boolean noUnmap) {
        DeviceGeometry g = device.geometry();
        if (g.caps().write() && !g.caps().zero()) {
            // The server offers no WRITE_ZEROES: write zeros, one maximal buffer reused read-only.
            ByteBuffer zeros = ByteBuffer.allocate((int) Math.min(length, g.maxIoSize())).asReadOnlyBuffer();
            return split(Io.OP_WRITE, fua ? Io.F_FUA : 0, offset, length, zeros, DeviceGeometry::maxIoSize);
        }
        return split(Io.OP_WRITE_ZEROES, (fua ? Io.F_FUA : 0) | (noUnmap ? Io.F_NOUNMAP : 0), offset, length, null,
                DeviceGeometry::maxWriteZeroesBytes);
    }

    /** SECURE_ERASE, where the server said secure_discard; pieces of max_discard_sectors, as Linux's client cuts them. */
    CompletableFuture<Void> secureErase(long offset, long length) {
        DeviceGeometry g = device.geometry();
        if (!g.caps().secureErase()) {
            return failed(Errno.EOPNOTSUPP, "device " + name + " cannot erase securely");
        }
        return split(Io.OP_SECURE_ERASE, 0, offset, length, null, DeviceGeometry::maxSecureEraseBytes);
    }

    private static CompletableFuture<Void> failed(int errno, String msg) {
        return CompletableFuture.failedFuture(new BlockIoException(errno, msg));
    }

    /**
     * Check and cut one request into pieces of at most {@code max} bytes. For data ops each
     * piece is a slice of {@code buf}; a shorter {@code buf} (the zero buffer) is reused.
     */
    private CompletableFuture<Void> split(int op, int flags, long offset, long length, ByteBuffer buf,
                                          ToIntFunction<DeviceGeometry> max) {
        return split(op, flags, offset, length, buf, max, true);
    }

    private CompletableFuture<Void> split(int op, int flags, long offset, long length, ByteBuffer buf,
                                          ToIntFunction<DeviceGeometry> max, boolean mayRefresh) {
        DeviceGeometry g = device.geometry();
        boolean write = op != Io.OP_READ;
        if (write && !g.caps().write()) {
            return failed(Errno.EROFS, "device " + name + " is mapped read-only");
        }
        int lbs = g.logicalBlockSize();
        if (offset < 0 || length < 0 || offset % lbs != 0 || length % lbs != 0) {
            return failed(Errno.EINVAL, "request " + offset + "+" + length + " misaligned to " + lbs);
        }
        if (offset > g.size() - length) {
            if (mayRefresh && device.state() == DeviceState.MAPPED) {
                // The export may have grown since the last OPEN: ask once before refusing, so
                // IO beyond the old end works as soon as the server has the new size.
                return device.refreshSize().thenCompose(size -> split(op, flags, offset, length, buf, max, false));
            }
            return failed(Errno.EINVAL, "request " + offset + "+" + length + " beyond " + g.size());
        }
        int step = max.applyAsInt(g);
        int n = BlockSplit.pieces(length, step);
        Request r = start(op, n, length);
        if (r.future.isDone()) {
            return r.future;
        }
        boolean whole = buf != null && buf.remaining() == length;
        try (BlockPlug plug = n > 1 ? device.plug() : BlockPlug.NONE) {
            BlockSplit.forEach(offset, length, step, (at, len, pos) -> {
                ByteBuffer data = buf == null ? NO_DATA : BlockSplit.slice(buf, whole ? pos : 0, len);
                device.submit(new Piece(device, r, op, flags, at, len, data));
            });
        }
        return r.future;
    }

    /**
     * A new request, counted in flight under the lock unmap checks; already completed when
     * the device is unmapped or there is nothing to do.
     */
    private Request start(int op, int pieces, long length) {
        Request r = new Request(op, pieces, length);
        if (!device.admit(pieces)) {
            r.future.completeExceptionally(new BlockIoException(Errno.ENODEV, "device " + name + " is unmapped"));
        } else if (pieces == 0) {
            r.future.complete(null);
        }
        return r;
    }

    /** One caller request: completes when all its pieces have, with the first error. */
    final class Request {
        final int op;
        final CompletableFuture<Void> future = new CompletableFuture<>();
        final AtomicInteger left;
        final AtomicInteger firstError = new AtomicInteger();
        final long length;
        final long startNanos = System.nanoTime();

        Request(int op, int pieces, long length) {
            this.op = op;
            this.left = new AtomicInteger(pieces);
            this.length = length;
        }

        void pieceDone(int errno) {
            if (errno != 0) {
                firstError.compareAndSet(0, errno);
            }
            if (left.decrementAndGet() == 0) {
                stats.finished();
                stats.latency(System.nanoTime() - startNanos);
                int e = firstError.get();
                if (e == 0) {
                    if (op == Io.OP_READ) {
                        stats.read(length);
                    } else if (op == Io.OP_WRITE) {
                        stats.wrote(length);
                    }
                    future.complete(null);
                } else {
                    stats.error();
                    future.completeExceptionally(new BlockIoException(e, "device " + name + " op " + op));
                }
            }
        }
    }
}

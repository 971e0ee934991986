package io.rnbd.rnbd.server.internal;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockRequests;
import io.rnbd.rnbd.api.BlockSplit;
import io.rnbd.rnbd.api.BlockStats;
import io.rnbd.rnbd.proto.Io;
import io.rnbd.rtrs.api.RtrsServerRequest;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * An RNBD IO, as rnbd-srv.c's process_rdma: the request checked once, against the mapping and
 * the export's geometry ({@link BlockRequests}, so the backend's device trusts it), then run on
 * the export's device, counted in the export's stats and answered with the device's errno.
 */
final class IoHandler {
    /** How long the backend may hold one request before it is reported slow (never answered early); 0 = never. */
    private volatile long backendTimeoutMs = RnbdServer.DEFAULT_BACKEND_TIMEOUT_MS;

    void backendTimeoutMs(long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("backend.timeout.ms must be >= 0: " + ms);
        }
        this.backendTimeoutMs = ms;
    }

    void handle(RtrsServerRequest req, ServerSession s, Io io) throws BlockIoException {
        Opening o = s.device(io.deviceId());
        if (o == null) {
            throw new BlockIoException(Errno.ENXIO, "unknown device id " + io.deviceId());
        }
        Export e = o.export();
        BlockStats stats = e.stats();
        if (!io.knownOp() || io.unknownFlags() != 0) {
            // a newer client's op or flag: flags are ignored as Linux's rnbd_to_bio_flags ignores
            // them, an op is answered EOPNOTSUPP below; the path stays either way
            stats.unknown();
        }
        Function<BlockDevice, CompletableFuture<Void>> op;
        try {
            op = ioOp(req, o, io);
        } catch (BlockIoException ex) {
            stats.error();
            throw ex;
        }
        stats.started();
        long startNanos = System.nanoTime();
        ExportRole.Kind kind = io.op() == Io.OP_READ ? ExportRole.Kind.READ
                : io.op() == Io.OP_FLUSH ? ExportRole.Kind.FLUSH : ExportRole.Kind.CHANGE;
        e.submit(op, kind, o.leg(), s.name(), backendTimeoutMs, errno -> {
            stats.finished();
            stats.latency(System.nanoTime() - startNanos);
            if (errno != 0) {
                stats.error();
            } else if (io.op() == Io.OP_READ) {
                stats.read(io.biSize());
            } else if (io.op() == Io.OP_WRITE) {
                stats.wrote(io.biSize());
            }
            req.complete(errno);
        });
    }

    /** Validate {@code io} against the opening and the device; the operation to run. */
    private static Function<BlockDevice, CompletableFuture<Void>> ioOp(RtrsServerRequest req, Opening o, Io io)
            throws BlockIoException {
        Geometry g = o.export().geometry();
        int op = io.op();
        if (!io.knownOp()) {
            // Linux's server WARNs and runs it as a READ (rnbd_to_bio_flags' default); an errno
            // is what a client can act on
            throw new BlockIoException(Errno.EOPNOTSUPP, "unknown op " + op);
        }
        // Linux's client sends a FLUSH as an RTRS read without data (rq_data_dir of REQ_OP_FLUSH
        // is READ), ours as a write: either direction carries it
        if (op != Io.OP_FLUSH && (op == Io.OP_READ) == req.isWrite()) {
            throw new BlockIoException(Errno.EINVAL, "op " + op + " sent in the wrong direction");
        }
        if (op != Io.OP_READ && op != Io.OP_FLUSH && !o.writable()) {
            throw new BlockIoException(Errno.EROFS, "device " + io.deviceId() + " is mapped read-only");
        }
        ByteBuffer data = req.data();
        if (op != Io.OP_READ && op != Io.OP_WRITE && data.hasRemaining()) {
            throw new BlockIoException(Errno.EINVAL, "op " + op + " carries data");
        }
        if (op == Io.OP_FLUSH) {
            return BlockDevice::flush;
        }
        long offset = io.offset();
        int len = io.biSize();
        if (len == 0) {
            throw new BlockIoException(Errno.EINVAL, "IO of 0 bytes at " + offset);
        }
        // the one check of the request for every backend: the device trusts what passes it.
        // No limit on a READ's or WRITE's length here: the transport's chunk bounds it, and one
        // larger than the device takes is split below (data = false skips the max-IO check)
        BlockIoException bad = BlockRequests.outOfBounds(offset, len, false, g.size(), g.logicalBlockSize(),
                Integer.MAX_VALUE);
        if (bad != null) {
            throw bad;
        }
        boolean fua = io.has(Io.F_FUA);
        Function<BlockDevice, CompletableFuture<Void>> body;
        switch (op) {
            case Io.OP_READ:
            case Io.OP_WRITE:
                if (data.remaining() != len) {
                    throw new BlockIoException(Errno.EINVAL, "bi_size " + len + " but " + data.remaining()
                            + " bytes of data");
                }
                int max = BlockSplit.maxPiece(g.maxIoSize(), g.logicalBlockSize()); // pieces stay aligned
                boolean write = op == Io.OP_WRITE;
                body = d -> inPieces(d, offset, data, max, write, fua);
                break;
            case Io.OP_DISCARD:
                if (!g.caps().trim()) {
                    throw new BlockIoException(Errno.EOPNOTSUPP, "export cannot discard");
                }
                body = d -> d.trim(offset, len);
                break;
            case Io.OP_SECURE_ERASE:
                if (!g.caps().secureErase()) {
                    throw new BlockIoException(Errno.EOPNOTSUPP, "export cannot erase securely");
                }
                body = d -> d.secureErase(offset, len);
                break;
            case Io.OP_WRITE_ZEROES:
                // protocol 2.2: NOUNMAP keeps the range allocated (a 6.12 client never sets it)
                boolean noUnmap = io.has(Io.F_NOUNMAP);
                body = d -> d.writeZeroes(offset, len, fua, noUnmap);
                break;
            default:
                throw new BlockIoException(Errno.EOPNOTSUPP, "op " + op + " not supported");
        }
        if (io.has(Io.F_PREFLUSH)) {
            return d -> d.flush().thenCompose(v -> body.apply(d));
        }
        return body;
    }

    /**
     * A READ or WRITE larger than the device's largest IO, split into pieces it takes, as
     * Linux's server leaves to its block layer (a bio beyond max_hw_sectors is split). The
     * client's limit is the session's max IO (chunk.size − 4 KiB), not the OPEN_RSP's
     * max_hw_sectors: Linux 6.1's rnbd-client ignores the latter (rnbd-clt.c sets
     * max_hw_sectors from the session's max_io_size), so with 256 KiB chunks it sends 252 KiB
     * to a device that takes 128 KiB. The pieces go to the device together, each piece of a
     * FUA write FUA; the whole completes when every piece started has, with the first failure
     * if any (no piece starts after one has failed). A request the device takes whole goes to
     * it as {@code data} itself.
     */
    static CompletableFuture<Void> inPieces(BlockDevice d, long offset, ByteBuffer data, int max, boolean write,
                                            boolean fua) {
        int len = data.remaining();
        if (len <= max) {
            // the common case pays for no closure
            return write ? d.write(offset, data, fua) : d.read(offset, data);
        }
        return BlockSplit.run(offset, len, max, BlockSplit.ALL, (at, n, pos) -> {
            ByteBuffer piece = BlockSplit.slice(data, pos, n);
            return write ? d.write(at, piece, fua) : d.read(at, piece);
        });
    }
}

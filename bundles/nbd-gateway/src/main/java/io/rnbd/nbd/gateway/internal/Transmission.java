package io.rnbd.nbd.gateway.internal;

import static io.rnbd.nbd.proto.NbdConstants.*;

import io.rnbd.nbd.gateway.internal.io.BufferPool;
import io.rnbd.nbd.proto.NbdErrors;
import io.rnbd.nbd.proto.NbdProtoException;
import io.rnbd.nbd.proto.Request;
import io.rnbd.nbd.transport.ChannelInput;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockPlug;
import io.rnbd.rnbd.api.BlockSplit;
import io.rnbd.rnbd.api.Capabilities;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transmission phase of one connection (what follows the handshake): the connection's
 * reader thread decodes requests, answers those {@link RequestCheck} refuses, takes the
 * others' {@link Permits} and payloads and runs them on the device; their completions become
 * replies for the connection's {@link ReplyWriter}, and a written reply gives its permits and
 * buffer back.
 */
final class Transmission {
    // Under the connection's name: one logger shows all a connection says.
    private static final Logger LOG = LoggerFactory.getLogger(NbdConnection.class);
    /**
     * How many pieces of one request the device holds at once: a 32 MiB NBD request or a huge
     * trim goes a few pieces of the device's max IO at a time instead of flooding its queue.
     */
    static final int WINDOW = 8;

    private final NbdConnection con;
    private final long id;
    private final BlockDevice device;
    private final Capabilities caps;
    private final RequestCheck check;
    private final BufferPool pool;
    private final Permits permits;
    private final NbdServerStats stats;
    private final LongSupplier nanoTime;
    private final ReplyWriter writer;
    private final BooleanSupplier closing;
    /** The connection's reader thread, which builds this and runs {@link #run}. */
    private final Thread reader;
    /** When the client last sent a request or got a reply (nanoTime); for the idle timeout. */
    private volatile long lastActive;
    /**
     * Requests the device has not answered yet. Replies still being written do not count: a
     * client that stops reading its replies is as idle as one that stops sending.
     */
    private final AtomicInteger inDevice = new AtomicInteger();
    /** Held while the requests read in together are handed to the device; reader thread only. */
    private BlockPlug plug = BlockPlug.NONE;

    /** On the connection's reader thread, once the handshake agreed on {@code r}. */
    Transmission(NbdConnection con, long id, Negotiation.Result r, BufferPool pool, Permits permits,
                 NbdServerStats stats, LongSupplier nanoTime) {
        this.con = con;
        this.id = id;
        this.device = r.device();
        this.caps = device.capabilities();
        this.check = new RequestCheck(r.transmissionFlags(), r.structuredReplies(), caps, device);
        this.pool = pool;
        this.permits = permits;
        this.stats = stats;
        this.nanoTime = nanoTime;
        this.writer = new ReplyWriter(r.out(), r.structuredReplies(), this::written, con::closeChannel);
        this.closing = con::closing;
        this.reader = Thread.currentThread();
    }

    /** Writes this connection's replies; the connection runs its thread and may make it non-blocking. */
    ReplyWriter writer() {
        return writer;
    }

    void touch() {
        lastActive = nanoTime.getAsLong();
    }

    long lastActive() {
        return lastActive;
    }

    /** Whether the device works on a request of this connection. */
    boolean busy() {
        return inDevice.get() > 0;
    }

    /**
     * Requests that arrived together go to the device together: while the next request is
     * already in the staging buffer, the device is plugged ({@link BlockDevice#plug}; an RNBD
     * device then sends them as one RTRS post per connection). The plug is let go before
     * anything that can wait (the socket, the in-flight budget), so plugged IO never waits for
     * what it holds up. Returns when the client disconnects or the connection closes.
     */
    void run(ChannelInput in) throws IOException, NbdProtoException, InterruptedException {
        try {
            transmitPlugged(in);
        } finally {
            unplug();
        }
    }

    private void unplug() {
        BlockPlug p = plug;
        plug = BlockPlug.NONE;
        p.close();
    }

    private void transmitPlugged(ChannelInput in) throws IOException, NbdProtoException, InterruptedException {
        while (!con.closing()) {
            if (in.buffered() < Request.SIZE) {
                unplug();
            }
            if (!in.await(Request.SIZE)) {
                return;
            }
            Request req = Request.decode(in.need(Request.SIZE));
            touch();
            stats.requests.increment();
            if (req.type() == CMD_DISC) {
                return;
            }
            int err = con.exportGone() ? ESHUTDOWN : check.errorOf(req);
            long len = req.length();
            if (req.type() == CMD_WRITE) {
                if (err != 0) {
                    // Still in sync: drop the payload, answer the error, carry on.
                    if (in.buffered() < len) {
                        unplug();
                    }
                    in.skip(len);
                    answerNow(Reply.failed(req.handle(), false, err, RequestCheck.why(req, err), 0));
                    continue;
                }
                acquire(len);
                ByteBuffer buf = len == 0 ? null : pool.acquire((int) len);
                if (buf != null) {
                    if (in.buffered() < len) {
                        unplug();
                    }
                    try {
                        in.readFully(buf);
                    } catch (IOException e) {
                        written(new Reply(req.handle(), EIO, null, false, 0, buf, len));
                        throw e;
                    }
                    buf.flip();
                    stats.bytesWritten.add(len);
                }
                plugIfMoreWaiting(in);
                execute(req, buf);
            } else if (err != 0) {
                answerNow(Reply.failed(req.handle(), req.type() == CMD_READ, err, RequestCheck.why(req, err), 0));
            } else {
                long held = req.type() == CMD_READ ? len : 0;
                acquire(held);
                plugIfMoreWaiting(in);
                execute(req, req.type() == CMD_READ && len > 0 ? pool.acquire((int) len) : null);
            }
        }
    }

    private void plugIfMoreWaiting(ChannelInput in) {
        if (plug == BlockPlug.NONE && in.buffered() >= Request.SIZE) {
            plug = device.plug();
        }
    }

    /** An answer that holds no in-flight budget (validation errors). */
    private void answerNow(Reply r) throws InterruptedException, EOFException {
        acquire(0);
        writer.submit(r);
    }

    private void acquire(long payload) throws InterruptedException, EOFException {
        if (permits.tryAcquire(payload)) {
            return;
        }
        unplug(); // waiting for completions: the plugged requests must be out first
        permits.acquire(payload, closing);
    }

    /** The writer's callback for every reply it wrote (or dropped on a broken connection). */
    private void written(Reply r) {
        if (r.error() != 0) {
            stats.errors.increment();
        } else if (r.data() != null) {
            stats.bytesRead.add(r.data().limit());
        }
        if (r.data() != null) {
            pool.release(r.data());
        }
        permits.release(r.bytes());
    }

    private void execute(Request r, ByteBuffer buf) {
        BlockDevice dev = device;
        long len = r.length();
        boolean fua = r.has(CMD_FLAG_FUA) && caps.write();
        int max = BlockSplit.maxPiece(dev.maxIoSize(), dev.logicalBlockSize());
        CompletableFuture<Void> f;
        inDevice.incrementAndGet();
        try {
            switch (r.type()) {
                case CMD_READ:
                    f = BlockSplit.run(r.offset(), len, max, WINDOW,
                            (off, n, pos) -> dev.read(off, BlockSplit.slice(buf, pos, n)));
                    break;
                case CMD_WRITE:
                    f = BlockSplit.run(r.offset(), len, max, WINDOW,
                            (off, n, pos) -> dev.write(off, BlockSplit.slice(buf, pos, n), fua && caps.fua()));
                    f = withFlush(f, fua && !caps.fua(), dev);
                    break;
                case CMD_FLUSH:
                    f = dev.flush();
                    break;
                case CMD_TRIM:
                    f = BlockSplit.run(r.offset(), len, max, WINDOW, (off, n, pos) -> dev.trim(off, n));
                    f = withFlush(f, fua && caps.flush(), dev);
                    break;
                case CMD_WRITE_ZEROES:
                    // NO_HOLE: the range must stay allocated, RNBD's NOUNMAP
                    boolean noHole = r.has(CMD_FLAG_NO_HOLE);
                    f = BlockSplit.run(r.offset(), len, max, WINDOW,
                            (off, n, pos) -> dev.writeZeroes(off, n, fua && caps.fua(), noHole));
                    f = withFlush(f, fua && !caps.fua(), dev);
                    break;
                default:
                    throw new IllegalStateException("validated request of type " + r.type());
            }
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        boolean read = r.type() == CMD_READ;
        long held = read || r.type() == CMD_WRITE ? len : 0;
        f.whenComplete((v, t) -> {
            // Activity as the answer is handed to the writer, not after it is written: the client
            // may act on the reply before the writer thread returns from the socket.
            touch();
            inDevice.decrementAndGet();
            if (t == null) {
                if (!read && buf != null) {
                    pool.release(buf);
                }
                reply(new Reply(r.handle(), 0, null, read, r.offset(), read ? buf : null, held));
            } else {
                int errno = BlockIoException.errnoOf(t);
                LOG.debug("con {}: request type {} at {} failed: {}", id, r.type(), r.offset(), t.toString());
                if (buf != null) {
                    // Safe: a split request fails only after all of its chunks have ended.
                    pool.release(buf);
                }
                reply(Reply.failed(r.handle(), read, NbdErrors.toWire(errno), messageOf(t), held));
            }
        });
    }

    /**
     * A device that completes on the calling thread completes on the reader: its replies go to
     * the writer thread, so the reader goes on draining requests (see {@link ReplyWriter}).
     */
    private void reply(Reply r) {
        if (Thread.currentThread() == reader) {
            writer.enqueue(r);
        } else {
            writer.submit(r);
        }
    }

    private static CompletableFuture<Void> withFlush(CompletableFuture<Void> f, boolean flush, BlockDevice dev) {
        return flush ? f.thenCompose(v -> dev.flush()) : f;
    }

    private static String messageOf(Throwable t) {
        while (t.getCause() != null && !(t instanceof BlockIoException)) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    }
}

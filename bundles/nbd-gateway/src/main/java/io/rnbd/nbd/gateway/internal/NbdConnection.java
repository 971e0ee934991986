package io.rnbd.nbd.gateway.internal;

import static io.rnbd.nbd.gateway.proto.NbdConstants.*;

import io.rnbd.nbd.gateway.internal.io.BufferPool;
import io.rnbd.nbd.gateway.internal.io.ChannelInput;
import io.rnbd.nbd.gateway.proto.NbdErrors;
import io.rnbd.nbd.gateway.proto.NbdProtoException;
import io.rnbd.nbd.gateway.proto.Request;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockPlug;
import io.rnbd.rnbd.api.Capabilities;
import io.rnbd.rnbd.api.DeviceClaim;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One NBD client: a reader thread (handshake, then requests) and a writer thread (replies).
 * Requests run asynchronously on the device, many at a time; replies go out as they complete.
 */
final class NbdConnection implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(NbdConnection.class);
    private static final int STAGING = 256 * 1024;

    private final long id;
    private final SocketChannel ch;
    private final String peer;
    private final ExportLookup exports;
    private final BufferPool pool;
    private final NbdServerConfig config;
    private final Consumer<NbdConnection> onClosed;
    private final ScheduledExecutorService timer;
    private final NbdServerStats stats;
    private final TlsPolicy tls;
    private final LongSupplier nanoTime;
    /** When the client last sent a request or got a reply (nanoTime); for the idle timeout. */
    private volatile long lastActive;
    /**
     * Requests the device has not answered yet. Replies still being written do not count: a
     * client that stops reading its replies is as idle as one that stops sending.
     */
    private final AtomicInteger inDevice = new AtomicInteger();
    private volatile boolean negotiated;
    private final Thread reader;
    private final Semaphore slots;
    private final Semaphore bytes;
    private final int bytePermitUnit = 512;
    private volatile boolean closing;
    private volatile BlockDevice device;
    /** Set when the export went away: requests from then on are answered ESHUTDOWN. */
    private volatile boolean deviceGone;
    /** Held from the handshake to the close: the device counts this connection as a user. */
    private DeviceClaim claim;
    private volatile ReplyWriter writer;
    /** The reader's selector on a plain (non-blocking) socket; null over TLS. */
    private volatile Selector readable;
    private Thread writerThread;
    // Set once negotiated; read only by the reader thread.
    private int flags;
    private boolean structured;
    private Capabilities caps;
    /** Held while the requests read in together are handed to the device; reader thread only. */
    private BlockPlug plug = BlockPlug.NONE;

    NbdConnection(long id, SocketChannel ch, String peer, ExportLookup exports, BufferPool pool,
                  NbdServerConfig config, ScheduledExecutorService timer, LongSupplier nanoTime, TlsPolicy tls,
                  NbdServerStats stats, Consumer<NbdConnection> onClosed) {
        this.nanoTime = nanoTime;
        this.tls = tls;
        this.timer = timer;
        this.stats = stats;
        this.id = id;
        this.ch = ch;
        this.peer = peer;
        this.exports = exports;
        this.pool = pool;
        this.config = config;
        this.onClosed = onClosed;
        this.slots = new Semaphore(config.maxInflight());
        this.bytes = new Semaphore((int) (config.maxInflightBytes() / bytePermitUnit));
        this.reader = new Thread(this, "nbd-con-" + id);
        reader.setDaemon(true);
    }

    void start() {
        reader.start();
    }

    BlockDevice device() {
        return device;
    }

    /**
     * The export went away (unmapped with force): every request from now on is answered
     * NBD_ESHUTDOWN, as the protocol asks of a server that shuts down, so the client learns
     * why; the connection closes when the client disconnects, or after the drain timeout.
     */
    void deviceGone() {
        deviceGone = true;
        timer.schedule(this::shutdown, config.drainTimeout().toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Stops reading requests; in-flight ones still get their replies, then the socket closes. */
    void shutdown() {
        closing = true;
        try {
            ch.shutdownInput();
        } catch (IOException e) {
            LOG.debug("con {}: shutdownInput: {}", id, e.toString());
        }
    }

    private void handshakeExpired() {
        if (!negotiated) {
            stats.handshakeTimeouts.increment();
            LOG.warn("NBD client {} dropped: no handshake within {}", peer, config.handshakeTimeout());
            closeChannel();
        }
    }

    /**
     * Closes a negotiated connection that had nothing in flight and sent nothing for the idle
     * timeout, so abandoned clients cannot hold the connection cap; otherwise checks again
     * when the timeout would next expire. A request the device still works on is not idleness.
     */
    private void checkIdle() {
        if (closing) {
            return;
        }
        long timeout = config.idleTimeout().toNanos();
        long idleFor = nanoTime.getAsLong() - lastActive;
        boolean busy = inDevice.get() > 0;
        if (!busy && idleFor >= timeout) {
            stats.idleTimeouts.increment();
            LOG.info("NBD client {} closed: idle for {} s", peer, config.idleTimeout().toSeconds());
            closing = true;
            closeChannel();
            return;
        }
        timer.schedule(this::checkIdle, busy ? timeout : timeout - idleFor, TimeUnit.NANOSECONDS);
    }

    private void touch() {
        lastActive = nanoTime.getAsLong();
    }

    /** Waits for the connection's threads; forces the socket shut if they do not end in time. */
    void join(long timeoutMs) throws InterruptedException {
        reader.join(timeoutMs);
        if (reader.isAlive()) {
            closeChannel();
            reader.join(timeoutMs);
        }
    }

    @Override
    public void run() {
        ChannelInput in = new ChannelInput(ch, STAGING);
        try {
            ScheduledFuture<?> deadline = timer.schedule(this::handshakeExpired,
                    config.handshakeTimeout().toNanos(), TimeUnit.NANOSECONDS);
            Negotiation.Result r;
            try {
                r = new Negotiation(ch, in, exports, peer, tls, STAGING).run();
            } finally {
                negotiated = true;
                deadline.cancel(false);
            }
            if (r == null || closing) {
                return;
            }
            device = r.device();
            if (r.device() instanceof RemoteBlockDevice remote) {
                // An idle connection is a user too: unmapping without --force is refused meanwhile.
                claim = remote.claim(peer.equals("unix") ? "nbd unix socket #" + id : "nbd " + peer);
            }
            // The device may have been withdrawn while we negotiated (see NbdServer.exportRemoved).
            if (exports.find(r.exportName()) != r.device()) {
                return;
            }
            flags = r.transmissionFlags();
            structured = r.structuredReplies();
            caps = r.device().capabilities();
            LOG.debug("con {} ({}): export '{}' flags 0x{}", id, peer, printable(r.exportName()),
                    Integer.toHexString(flags));
            writer = new ReplyWriter(r.out(), structured, this::written, this::closeChannel);
            if (r.out() == ch) {
                // Plain socket: non-blocking, so completing threads can write replies inline.
                ch.configureBlocking(false);
                readable = Selector.open();
                ch.register(readable, SelectionKey.OP_READ);
                r.in().nonBlocking(this::awaitReadable);
                writer.nonBlocking(ch, stats.repliesInline::increment);
            }
            writerThread = new Thread(writer, "nbd-con-" + id + "-writer");
            writerThread.setDaemon(true);
            writerThread.start();
            touch();
            if (!config.idleTimeout().isZero()) {
                timer.schedule(this::checkIdle, config.idleTimeout().toNanos(), TimeUnit.NANOSECONDS);
            }
            transmit(r.in());
        } catch (EOFException | ClosedChannelException e) {
            LOG.debug("con {} ({}): closed: {}", id, peer, e.toString());
        } catch (NbdProtoException e) {
            stats.dropped.increment();
            LOG.warn("NBD client {} dropped: {}", peer, printable(e.getMessage()));
        } catch (IOException e) {
            if (!closing) {
                LOG.debug("con {} ({}): {}", id, peer, e.toString());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.warn("NBD client {} dropped after an internal error", peer, e);
        } finally {
            finish();
        }
    }

    /**
     * Requests that arrived together go to the device together: while the next request is
     * already in the staging buffer, the device is plugged ({@link BlockDevice#plug}; an RNBD
     * device then sends them as one RTRS post per connection). The plug is let go before
     * anything that can wait (the socket, the in-flight budget), so plugged IO never waits for
     * what it holds up.
     */
    private void transmit(ChannelInput in) throws IOException, NbdProtoException, InterruptedException {
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
        while (!closing) {
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
            int err = deviceGone ? ESHUTDOWN : validate(req);
            long len = req.length();
            if (req.type() == CMD_WRITE) {
                if (err != 0) {
                    // Still in sync: drop the payload, answer the error, carry on.
                    if (in.buffered() < len) {
                        unplug();
                    }
                    in.skip(len);
                    answerNow(Reply.failed(req.handle(), false, err, why(req, err), 0));
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
                answerNow(Reply.failed(req.handle(), req.type() == CMD_READ, err, why(req, err), 0));
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
        int permits = bytePermits(payload);
        if (slots.tryAcquire()) {
            if (permits == 0 || bytes.tryAcquire(permits)) {
                return;
            }
            slots.release();
        }
        unplug(); // waiting for completions: the plugged requests must be out first
        while (!slots.tryAcquire(100, TimeUnit.MILLISECONDS)) {
            if (closing) {
                throw new EOFException("connection closing");
            }
        }
        if (permits > 0) {
            while (!bytes.tryAcquire(permits, 100, TimeUnit.MILLISECONDS)) {
                if (closing) {
                    slots.release();
                    throw new EOFException("connection closing");
                }
            }
        }
    }

    private int bytePermits(long payload) {
        return (int) ((payload + bytePermitUnit - 1) / bytePermitUnit);
    }

    private void written(Reply r) {
        if (r.error() != 0) {
            stats.errors.increment();
        } else if (r.data() != null) {
            stats.bytesRead.add(r.data().limit());
        }
        if (r.data() != null) {
            pool.release(r.data());
        }
        int permits = bytePermits(r.bytes());
        if (permits > 0) {
            bytes.release(permits);
        }
        slots.release();
    }

    /** The NBD error for a request that must not reach the device, or 0. */
    private int validate(Request r) {
        int type = r.type();
        int allowed = (flags & FLAG_SEND_FUA) != 0 ? CMD_FLAG_FUA : 0;
        boolean writes = type == CMD_WRITE || type == CMD_TRIM || type == CMD_WRITE_ZEROES;
        switch (type) {
            case CMD_READ:
                if (structured) {
                    allowed |= CMD_FLAG_DF;
                }
                break;
            case CMD_WRITE:
            case CMD_FLUSH:
                break;
            case CMD_TRIM:
                if (caps.write() && !caps.trim()) {
                    return EINVAL;
                }
                break;
            case CMD_WRITE_ZEROES:
                allowed |= CMD_FLAG_NO_HOLE | CMD_FLAG_FAST_ZERO;
                break;
            default:
                return EINVAL;
        }
        if ((r.flags() & ~allowed) != 0) {
            return EINVAL;
        }
        if (writes && !caps.write()) {
            return EPERM;
        }
        if (type == CMD_FLUSH) {
            return caps.flush() && r.offset() == 0 && r.length() == 0 ? 0 : EINVAL;
        }
        if ((type == CMD_READ || type == CMD_WRITE) && r.length() > MAX_PAYLOAD) {
            return EINVAL;
        }
        long size = device.size();
        if (r.offset() < 0 || r.offset() > size || r.length() > size - r.offset()) {
            return type == CMD_WRITE || type == CMD_WRITE_ZEROES ? ENOSPC : EINVAL;
        }
        int block = device.logicalBlockSize();
        if (r.offset() % block != 0 || r.length() % block != 0) {
            return EINVAL;
        }
        if (r.has(CMD_FLAG_FAST_ZERO) && !caps.zero()) {
            return ENOTSUP;
        }
        return 0;
    }

    private String why(Request r, int err) {
        switch (err) {
            case ESHUTDOWN: return "the device was unmapped (rnbd:unmap --force); disconnect";
            case EPERM: return "read-only export";
            case ENOSPC: return "write beyond the end of the export";
            case ENOTSUP: return "zeroing is not faster than writing on this export";
            default: return "invalid request (type " + r.type() + ", flags 0x" + Integer.toHexString(r.flags())
                    + ", offset " + Long.toUnsignedString(r.offset()) + ", length " + r.length() + ")";
        }
    }

    private void execute(Request r, ByteBuffer buf) {
        BlockDevice dev = device;
        long len = r.length();
        boolean fua = r.has(CMD_FLAG_FUA) && caps.write();
        int max = Math.max(dev.logicalBlockSize(), dev.maxIoSize() / dev.logicalBlockSize() * dev.logicalBlockSize());
        CompletableFuture<Void> f;
        inDevice.incrementAndGet();
        try {
            switch (r.type()) {
                case CMD_READ:
                    f = len == 0 ? CompletableFuture.completedFuture(null)
                            : Splitter.run(r.offset(), len, max, (off, n, pos) -> dev.read(off, buf.slice((int) pos, n)));
                    break;
                case CMD_WRITE:
                    f = len == 0 ? CompletableFuture.completedFuture(null)
                            : Splitter.run(r.offset(), len, max,
                                    (off, n, pos) -> dev.write(off, buf.slice((int) pos, n), fua && caps.fua()));
                    f = withFlush(f, fua && !caps.fua(), dev);
                    break;
                case CMD_FLUSH:
                    f = dev.flush();
                    break;
                case CMD_TRIM:
                    f = len == 0 ? CompletableFuture.completedFuture(null)
                            : Splitter.run(r.offset(), len, max, (off, n, pos) -> dev.trim(off, n));
                    f = withFlush(f, fua && caps.flush(), dev);
                    break;
                case CMD_WRITE_ZEROES:
                    f = len == 0 ? CompletableFuture.completedFuture(null)
                            : Splitter.run(r.offset(), len, max,
                                    (off, n, pos) -> dev.writeZeroes(off, n, fua && caps.fua()));
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

    private void finish() {
        closing = true;
        if (writer != null) {
            waitForInflight();
            writer.stop();
            try {
                writerThread.join(config.drainTimeout().toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        closeChannel();
        if (readable != null) {
            try {
                readable.close();
            } catch (IOException e) {
                LOG.debug("con {}: closing the read selector: {}", id, e.toString());
            }
        }
        if (claim != null) {
            claim.close();
        }
        onClosed.accept(this);
    }

    private void waitForInflight() {
        try {
            if (!slots.tryAcquire(config.maxInflight(), config.drainTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.warn("NBD client {}: requests still in flight after {}, closing anyway", peer,
                        config.drainTimeout());
            } else {
                slots.release(config.maxInflight());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The reader waits here for the next bytes on a non-blocking socket. */
    private void awaitReadable() throws IOException {
        try {
            readable.select();
            readable.selectedKeys().clear();
        } catch (ClosedSelectorException e) {
            throw new ClosedChannelException();
        }
        if (!ch.isOpen()) {
            throw new ClosedChannelException();
        }
    }

    private void closeChannel() {
        try {
            ch.close();
        } catch (IOException e) {
            LOG.debug("con {}: close: {}", id, e.toString());
        }
        // A registered channel's socket is only released once no selector holds a key for it.
        Selector s = readable;
        if (s != null) {
            s.wakeup();
        }
        ReplyWriter w = writer;
        if (w != null) {
            w.wakeup();
        }
    }

    @Override
    public String toString() {
        return "nbd-con-" + id + "(" + peer + ")";
    }

    /**
     * What a client chose (an export name, and the protocol errors that quote it) made safe for
     * one log line: control characters escaped, so a client cannot forge log lines with a
     * newline in its export name.
     */
    static String printable(String clientText) {
        if (clientText == null) {
            return "";
        }
        StringBuilder b = new StringBuilder(clientText.length());
        for (int i = 0; i < clientText.length(); i++) {
            char c = clientText.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                b.append(String.format("\\x%02x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}

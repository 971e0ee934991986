package io.rnbd.nbd.gateway.internal;

import io.rnbd.common.AdaptivePoll;
import io.rnbd.common.SpareCpu;
import io.rnbd.nbd.gateway.internal.io.BufferPool;
import io.rnbd.nbd.proto.NbdProtoException;
import io.rnbd.nbd.transport.ChannelInput;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.DeviceClaim;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import java.io.EOFException;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One NBD client: a reader thread (handshake, then requests) and a writer thread (replies).
 * Requests run asynchronously on the device, many at a time; replies go out as they complete.
 * This class is the connection's life around them: the handshake deadline, the device claim,
 * the switch to non-blocking mode, the idle timeout, the end of an export and the close once
 * in-flight requests are answered; the requests themselves are {@link Transmission}'s.
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
    private volatile boolean negotiated;
    private final Thread reader;
    private final Permits permits;
    private volatile boolean closing;
    private volatile BlockDevice device;
    /** Set when the export went away: requests from then on are answered ESHUTDOWN. */
    private volatile boolean deviceGone;
    /** Held from the handshake to the close: the device counts this connection as a user. */
    private DeviceClaim claim;
    private volatile ReplyWriter writer;
    /** The reader's selector on a plain (non-blocking) socket; null over TLS. */
    private volatile Selector readable;
    /** Reader thread only: the longest it polls for the next request ({@link #busyPoll}), and its poll. */
    private final long pollNanos;
    private AdaptivePoll poll = AdaptivePoll.never();
    private final SpareCpu.Ready requestArrived = () -> readable.selectNow() > 0;
    private final LongFunction<AdaptivePoll> polls;
    private Thread writerThread;
    /** Set once negotiated, before the idle timer starts. */
    private volatile Transmission transmission;

    NbdConnection(long id, SocketChannel ch, String peer, ExportLookup exports, BufferPool pool,
                  NbdServerConfig config, ScheduledExecutorService timer, LongSupplier nanoTime, TlsPolicy tls,
                  NbdServerStats stats, Consumer<NbdConnection> onClosed,
                  LongFunction<AdaptivePoll> polls) {
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
        this.permits = new Permits(config.maxInflight(), config.maxInflightBytes());
        this.pollNanos = config.pollUsec() * 1000L;
        this.polls = polls;
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

    /** Whether the export went away ({@link #deviceGone}). */
    boolean exportGone() {
        return deviceGone;
    }

    /** Whether the connection is ending: no further request is read. */
    boolean closing() {
        return closing;
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
        Transmission t = transmission;
        long timeout = config.idleTimeout().toNanos();
        long idleFor = nanoTime.getAsLong() - t.lastActive();
        boolean busy = t.busy();
        if (!busy && idleFor >= timeout) {
            stats.idleTimeouts.increment();
            LOG.info("NBD client {} closed: idle for {} s", peer, config.idleTimeout().toSeconds());
            closing = true;
            closeChannel();
            return;
        }
        timer.schedule(this::checkIdle, busy ? timeout : timeout - idleFor, TimeUnit.NANOSECONDS);
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
            LOG.debug("con {} ({}): export '{}' flags 0x{}", id, peer, printable(r.exportName()),
                    Integer.toHexString(r.transmissionFlags()));
            Transmission t = new Transmission(this, id, r, pool, permits, stats, nanoTime);
            writer = t.writer();
            if (r.out() == ch) {
                // Plain socket: non-blocking, so completing threads can write replies inline.
                ch.configureBlocking(false);
                readable = Selector.open();
                ch.register(readable, SelectionKey.OP_READ);
                if (pollNanos > 0) {
                    poll = polls.apply(pollNanos);
                }
                r.in().nonBlocking(this::awaitReadable);
                writer.nonBlocking(ch, stats.repliesInline::increment, stats.inlineWrites::increment);
            }
            writerThread = new Thread(writer, "nbd-con-" + id + "-writer");
            writerThread.setDaemon(true);
            writerThread.start();
            t.touch();
            transmission = t;
            if (!config.idleTimeout().isZero()) {
                timer.schedule(this::checkIdle, config.idleTimeout().toNanos(), TimeUnit.NANOSECONDS);
            }
            t.run(r.in());
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
        poll.close();
        if (claim != null) {
            claim.close();
        }
        onClosed.accept(this);
    }

    private void waitForInflight() {
        try {
            if (!permits.awaitAllReleased(config.drainTimeout())) {
                LOG.warn("NBD client {}: requests still in flight after {}, closing anyway", peer,
                        config.drainTimeout());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The reader waits here for the next bytes on a non-blocking socket. */
    private void awaitReadable() throws IOException {
        try {
            if (!busyPoll()) {
                readable.select();
                readable.selectedKeys().clear();
            }
            poll.woke(true);
        } catch (ClosedSelectorException e) {
            throw new ClosedChannelException();
        }
        if (!ch.isOpen()) {
            throw new ClosedChannelException();
        }
    }

    /**
     * The reader polls only while at most this many requests are in flight. Polling pays when
     * the client waits for our replies before it sends again (depth 1 to a few); at depth the
     * next request comes while completions keep the CPUs busy, and a spinning reader takes CPU
     * from the device threads that complete them. fio over TCP on 2 CPUs, medians of 6–8 runs
     * of 3 s: depth 32 from 63 K to 72 K IOPS, depth 128 from 66 K to 75 K, depth 1 the same
     * (docs/perf.md, section 6).
     */
    static final int POLL_MAX_INFLIGHT = 4;

    /**
     * Busy polling ({@link NbdServerConfig#pollUsec}, the longest window, like the soft devices'
     * poll.usec): look for the next request before sleeping in the selector, for as long as the
     * reader's {@link AdaptivePoll} window says. At depth 1 the client sends its next request right
     * after our reply; a reader asleep by then costs a wakeup, which on a VM is an exit and a good
     * part of the round trip. The window opens while requests keep coming soon after the reader
     * went idle and closes when the client pauses, so an idle connection never polls; a poll begins
     * only with few requests in flight ({@link #POLL_MAX_INFLIGHT}) and a CPU spare, yields between
     * looks, and ends when a yield kept it off the CPU. True when the socket is readable.
     */
    private boolean busyPoll() throws IOException {
        long polled = poll.polls();
        boolean hit = poll.idle(requestArrived, permits.inflight() <= POLL_MAX_INFLIGHT);
        if (poll.polls() != polled) {
            stats.readerPolls.increment();
        }
        if (hit) {
            readable.selectedKeys().clear();
            stats.readerPollHits.increment();
        }
        return hit;
    }

    void closeChannel() {
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

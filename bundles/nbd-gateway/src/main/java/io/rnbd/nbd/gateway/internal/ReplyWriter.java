package io.rnbd.nbd.gateway.internal;

import static io.rnbd.nbd.proto.NbdConstants.*;

import io.rnbd.nbd.proto.SimpleReply;
import io.rnbd.nbd.proto.StructuredError;
import io.rnbd.nbd.proto.StructuredReplyHeader;
import io.rnbd.nbd.transport.ChannelOutput;
import io.rnbd.rdma.api.CompletionBatch;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the replies of one connection, many replies per gathering write.
 *
 * <p>Two ways out. On a plain socket in non-blocking mode (see {@link #nonBlocking}), the
 * thread that completes a request writes its reply itself when nothing else is queued or being
 * written: one {@code write} without blocking, which saves the wake-up of the writer thread and
 * a context switch per reply (issue 22: at depth 1 that handoff is a large part of the
 * latency). Whatever does not fit into the socket at once, and every reply that finds the
 * writer busy, goes to the writer thread, which batches up to 64 replies per write and waits
 * for the socket to drain. So a completing thread (the device's) never blocks on a client that
 * stops reading, and the connection's reader never writes (measured with fio at depth 32,
 * writing inline from the reader halved the IOPS: requests piled up unread). Over TLS (a
 * blocking {@code SSLSocket}) every reply goes through the writer thread.
 */
final class ReplyWriter implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplyWriter.class);
    private static final int BATCH = 64;
    private static final Reply STOP = Reply.ok(-1, 0);
    /** Queued to wake the writer when an inline write left a remainder for it. */
    private static final Reply NUDGE = Reply.ok(-2, 0);

    private final GatheringByteChannel ch;
    private final boolean structured;
    private final Consumer<Reply> written;
    private final Runnable onBroken;
    private Runnable inline = () -> { };
    private Runnable inlineWrite = () -> { };
    private final LinkedBlockingQueue<Reply> queue = new LinkedBlockingQueue<>();
    private final ByteBuffer headers = ByteBuffer.allocateDirect(BATCH * 256);
    private final ByteBuffer[] gather = new ByteBuffer[BATCH * 2];
    private final Reply[] batch = new Reply[BATCH];
    /** Held while writing to the socket, by the writer thread or an inline writer. */
    private final ReentrantLock lock = new ReentrantLock();
    // Non-blocking mode only.
    private SocketChannel nb;
    private Selector writable;
    private final ByteBuffer inlineHeader = ByteBuffer.allocateDirect(64);
    /** Replies of a completion batch, waiting for its end; guarded by itself. */
    private final java.util.ArrayDeque<Reply> deferred = new java.util.ArrayDeque<>();
    private final Runnable flushDeferred = this::flushDeferred;
    // What a batch's inline write uses, under the lock.
    private final ByteBuffer inlineHeaders = ByteBuffer.allocateDirect(BATCH * 64);
    private final ByteBuffer[] inlineBatchGather = new ByteBuffer[BATCH * 2];
    private final int[] replyEnds = new int[BATCH];
    private final ByteBuffer[] inlineGather = new ByteBuffer[2];
    /** The unwritten tail of an inline reply (under lock): must go out before any other byte. */
    private ByteBuffer[] rest;
    private Reply restReply;
    private volatile boolean broken;

    /**
     * @param written  called once per reply after it was written (or dropped on a broken connection)
     * @param onBroken called once when writing fails
     */
    ReplyWriter(GatheringByteChannel ch, boolean structured, Consumer<Reply> written, Runnable onBroken) {
        this.ch = ch;
        this.structured = structured;
        this.written = written;
        this.onBroken = onBroken;
    }

    /**
     * Switches to non-blocking writes on {@code sc} (already in non-blocking mode): replies may
     * then be written by the completing thread. Call before the first {@link #submit}.
     */
    void nonBlocking(SocketChannel sc, Runnable onInlineReply, Runnable onInlineWrite) throws IOException {
        inline = onInlineReply;
        inlineWrite = onInlineWrite;
        writable = Selector.open();
        sc.register(writable, SelectionKey.OP_WRITE);
        nb = sc;
    }

    /** Hands {@code r} to the writer thread (the connection's reader uses this: it must not write). */
    void enqueue(Reply r) {
        queue.add(r);
    }

    /**
     * Writes {@code r} now if the socket is free and takes it whole, else hands it to the writer
     * thread. Inside a completion pass (the verbs SPI's {@link CompletionBatch}, found through
     * the completing thread: the soft RDMA provider's IO thread opens one around the completions
     * one socket read brought) the reply waits for the batch's end and leaves with the others of
     * the batch in one write: at depth the answers of a burst arrive together, and one write
     * wakes the client once instead of once per reply.
     */
    void submit(Reply r) {
        if (nb != null && r.error() == 0) {
            CompletionBatch pass = CompletionBatch.ofCurrentThread();
            if (pass.open()) {
                synchronized (deferred) {
                    deferred.add(r);
                }
                pass.defer(flushDeferred);
                return;
            }
        }
        // Error replies (rare, with a message of any length) always take the writer thread.
        if (nb != null && r.error() == 0 && queue.isEmpty() && lock.tryLock()) {
            boolean done = false;
            try {
                if (rest != null || broken) {
                    queue.add(r);
                } else {
                    done = writeInline(r);
                }
            } finally {
                lock.unlock();
            }
            if (done) {
                inline.run();
                written.accept(r);
            }
            return;
        }
        queue.add(r);
    }

    /**
     * At the end of a completion batch: the replies it gathered in one non-blocking gathering
     * write when the socket is free, as {@link #submit} writes one; what the socket does not
     * take, and everything when the writer is busy, goes to the writer thread in order. The
     * device threads of several paths may flush at once: each takes its own replies out.
     */
    private void flushDeferred() {
        while (true) {
            Reply[] batch;
            synchronized (deferred) {
                if (deferred.isEmpty()) {
                    return;
                }
                batch = new Reply[Math.min(deferred.size(), BATCH)];
                for (int i = 0; i < batch.length; i++) {
                    batch[i] = deferred.poll();
                }
            }
            int done = 0;
            boolean partial = false;
            if (queue.isEmpty() && lock.tryLock()) {
                try {
                    if (rest == null && !broken) {
                        int w = writeInlineBatch(batch);
                        done = w >> 1;
                        partial = (w & 1) != 0;
                    }
                } finally {
                    lock.unlock();
                }
            }
            for (int i = 0; i < batch.length; i++) {
                if (i < done) {
                    inline.run();
                    written.accept(batch[i]);
                } else if (!(partial && i == done)) {
                    queue.add(batch[i]); // the partial one is the writer thread's rest already
                }
            }
        }
    }

    /**
     * Under the lock: one non-blocking gathering write of {@code batch}. Returns twice the
     * number of replies that are all out, plus one if the next was taken in part: that one's
     * tail becomes the writer thread's {@link #rest}, to go before anything queued, as in
     * {@link #writeInline}.
     */
    private int writeInlineBatch(Reply[] batch) {
        int n = batch.length;
        inlineHeaders.clear();
        int g = 0;
        for (int i = 0; i < n; i++) {
            int start = inlineHeaders.position();
            boolean withData = encodeHeader(batch[i], inlineHeaders);
            inlineBatchGather[g++] = inlineHeaders.slice(start, inlineHeaders.position() - start);
            if (withData) {
                inlineBatchGather[g++] = batch[i].data();
            }
            replyEnds[i] = g;
        }
        try {
            inlineWrite.run();
            nb.write(inlineBatchGather, 0, g);
        } catch (IOException e) {
            fail(e);
            java.util.Arrays.fill(inlineBatchGather, 0, g, null);
            return 0; // all queued: the writer thread reports them as written (dropped)
        }
        int done = 0;
        int first = 0;
        while (done < n && !inlineBatchGather[replyEnds[done] - 1].hasRemaining()) {
            first = replyEnds[done];
            done++;
        }
        boolean partial = done < n && inlineBatchGather[first].position() > 0;
        if (partial) {
            int end = replyEnds[done];
            rest = new ByteBuffer[] {inlineBatchGather[first], end - first > 1 ? inlineBatchGather[first + 1] : null};
            restReply = batch[done];
            queue.add(NUDGE);
        }
        java.util.Arrays.fill(inlineBatchGather, 0, g, null);
        return done << 1 | (partial ? 1 : 0);
    }

    /**
     * Under the lock: one non-blocking write of {@code r}. True if it is all out; otherwise the
     * reply is the writer thread's (queued, or its tail left in {@link #rest}).
     */
    private boolean writeInline(Reply r) {
        inlineHeader.clear();
        boolean withData = encodeHeader(r, inlineHeader);
        inlineHeader.flip();
        inlineGather[0] = inlineHeader;
        int g = 1;
        if (withData) {
            inlineGather[g++] = r.data();
        }
        try {
            inlineWrite.run();
            nb.write(inlineGather, 0, g);
        } catch (IOException e) {
            fail(e);
            inlineGather[0] = inlineGather[1] = null;
            queue.add(r); // the writer thread reports it as written (dropped)
            return false;
        }
        boolean all = !inlineGather[g - 1].hasRemaining();
        if (!all) {
            // The socket is full: the writer thread finishes this reply before anything else.
            rest = new ByteBuffer[] {inlineGather[0], g > 1 ? inlineGather[1] : null};
            restReply = r;
            queue.add(NUDGE);
        }
        inlineGather[0] = inlineGather[1] = null;
        return all;
    }

    /** Ends the writer thread once everything queued so far has been written. */
    void stop() {
        queue.add(STOP);
    }

    /** Unblocks a writer thread waiting for the socket to drain (the connection is closing). */
    void wakeup() {
        Selector s = writable;
        if (s != null) {
            s.wakeup();
        }
    }

    @Override
    public void run() {
        try {
            while (true) {
                Reply r = queue.take();
                int n = 0;
                boolean stop = r == STOP;
                if (!stop && r != NUDGE) {
                    batch[n++] = r;
                }
                Reply q;
                while (!stop && n < BATCH && (q = queue.poll()) != null) {
                    if (q == STOP) {
                        stop = true;
                    } else if (q != NUDGE) {
                        batch[n++] = q;
                    }
                }
                lock.lock();
                try {
                    flushRest();
                    if (n > 0) {
                        writeBatch(n);
                    }
                } finally {
                    lock.unlock();
                }
                if (stop) {
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (writable != null) {
                try {
                    writable.close();
                } catch (IOException e) {
                    LOG.debug("closing the write selector: {}", e.toString());
                }
            }
        }
    }

    private void flushRest() {
        if (rest == null) {
            return;
        }
        ByteBuffer[] b = rest;
        Reply r = restReply;
        rest = null;
        restReply = null;
        write(b, b[1] == null ? 1 : 2);
        written.accept(r);
    }

    private void writeBatch(int n) {
        headers.clear();
        int g = 0;
        for (int i = 0; i < n; i++) {
            g = encode(batch[i], g);
        }
        write(gather, g);
        for (int i = 0; i < n; i++) {
            Reply r = batch[i];
            batch[i] = null;
            written.accept(r);
        }
        for (int i = 0; i < g; i++) {
            gather[i] = null;
        }
    }

    private void write(ByteBuffer[] bufs, int count) {
        if (broken) {
            return;
        }
        try {
            if (nb == null) {
                ChannelOutput.writeFully(ch, bufs, count);
            } else {
                writeFullyNonBlocking(bufs, count);
            }
        } catch (IOException | ClosedSelectorException e) {
            fail(e);
        }
    }

    private void writeFullyNonBlocking(ByteBuffer[] bufs, int count) throws IOException {
        int first = 0;
        while (first < count) {
            nb.write(bufs, first, count - first);
            while (first < count && !bufs[first].hasRemaining()) {
                first++;
            }
            if (first < count) {
                if (!nb.isOpen()) {
                    throw new java.nio.channels.ClosedChannelException();
                }
                // The client is slow to read: wait until the socket takes more (or closes).
                writable.select(1000);
                writable.selectedKeys().clear();
            }
        }
    }

    private void fail(Exception e) {
        if (!broken) {
            LOG.debug("writing replies failed: {}", e.toString());
            broken = true;
            onBroken.run();
        }
    }

    private int encode(Reply r, int g) {
        int start = headers.position();
        boolean withData = encodeHeader(r, headers);
        gather[g++] = headers.slice(start, headers.position() - start);
        if (withData) {
            gather[g++] = r.data();
        }
        return g;
    }

    /** Puts the reply's header into {@code out}; true if its data follows. */
    private boolean encodeHeader(Reply r, ByteBuffer out) {
        boolean withData = r.read() && r.error() == 0 && r.data() != null && r.data().hasRemaining();
        if (!structured || (!r.read() && r.error() == 0)) {
            new SimpleReply(r.error(), r.handle()).encode(out);
        } else if (r.error() != 0) {
            StructuredError e = new StructuredError(r.error(), r.message() == null ? "" : r.message());
            new StructuredReplyHeader(REPLY_FLAG_DONE, REPLY_TYPE_ERROR, r.handle(), e.encodedSize()).encode(out);
            e.encode(out);
        } else if (withData) {
            int len = StructuredReplyHeader.OFFSET_DATA_PREFIX + r.data().remaining();
            new StructuredReplyHeader(REPLY_FLAG_DONE, REPLY_TYPE_OFFSET_DATA, r.handle(), len).encode(out);
            out.putLong(r.offset());
        } else {
            // A zero-length read: nothing to carry, so just the final NONE chunk.
            new StructuredReplyHeader(REPLY_FLAG_DONE, REPLY_TYPE_NONE, r.handle(), 0).encode(out);
        }
        return withData;
    }
}

package io.rnbd.nbd.gateway.internal;

import static io.rnbd.nbd.gateway.proto.NbdConstants.*;

import io.rnbd.nbd.gateway.internal.io.ChannelOutput;
import io.rnbd.nbd.gateway.proto.SimpleReply;
import io.rnbd.nbd.gateway.proto.StructuredError;
import io.rnbd.nbd.gateway.proto.StructuredReplyHeader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.GatheringByteChannel;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the replies of one connection from its own thread, many replies per gathering write.
 * Replies are never written by the thread that completes them: neither a device's completion
 * thread (a client that stops reading must not block it) nor the connection's reader (which
 * must keep draining requests; measured with fio at depth 32, writing inline from the reader
 * halved the IOPS and caused loopback retransmits as requests piled up unread).
 */
final class ReplyWriter implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplyWriter.class);
    private static final int BATCH = 64;
    private static final Reply STOP = Reply.ok(-1, 0);

    private final GatheringByteChannel ch;
    private final boolean structured;
    private final Consumer<Reply> written;
    private final Runnable onBroken;
    private final LinkedBlockingQueue<Reply> queue = new LinkedBlockingQueue<>();
    private final ByteBuffer headers = ByteBuffer.allocateDirect(BATCH * 256);
    private final ByteBuffer[] gather = new ByteBuffer[BATCH * 2];
    private final Reply[] batch = new Reply[BATCH];
    private boolean broken;

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

    void submit(Reply r) {
        queue.add(r);
    }

    /** Ends the writer thread once everything queued so far has been written. */
    void stop() {
        queue.add(STOP);
    }

    @Override
    public void run() {
        try {
            while (true) {
                Reply r = queue.take();
                if (r == STOP) {
                    return;
                }
                int n = 0;
                batch[n++] = r;
                boolean stop = false;
                Reply q;
                while (n < BATCH && (q = queue.poll()) != null) {
                    if (q == STOP) {
                        stop = true;
                        break;
                    }
                    batch[n++] = q;
                }
                writeBatch(n);
                if (stop) {
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void writeBatch(int n) {
        headers.clear();
        int g = 0;
        for (int i = 0; i < n; i++) {
            g = encode(batch[i], g);
        }
        if (!broken) {
            try {
                ChannelOutput.writeFully(ch, gather, g);
            } catch (IOException e) {
                LOG.debug("writing replies failed: {}", e.toString());
                broken = true;
                onBroken.run();
            }
        }
        for (int i = 0; i < n; i++) {
            Reply r = batch[i];
            batch[i] = null;
            written.accept(r);
        }
        for (int i = 0; i < g; i++) {
            gather[i] = null;
        }
    }

    private int encode(Reply r, int g) {
        int start = headers.position();
        boolean withData = r.read() && r.error() == 0 && r.data() != null && r.data().hasRemaining();
        if (!structured || (!r.read() && r.error() == 0)) {
            new SimpleReply(r.error(), r.handle()).encode(headers);
        } else if (r.error() != 0) {
            StructuredError e = new StructuredError(r.error(), r.message() == null ? "" : r.message());
            new StructuredReplyHeader(REPLY_FLAG_DONE, REPLY_TYPE_ERROR, r.handle(), e.encodedSize()).encode(headers);
            e.encode(headers);
        } else if (withData) {
            int len = StructuredReplyHeader.OFFSET_DATA_PREFIX + r.data().remaining();
            new StructuredReplyHeader(REPLY_FLAG_DONE, REPLY_TYPE_OFFSET_DATA, r.handle(), len).encode(headers);
            headers.putLong(r.offset());
        } else {
            // A zero-length read: nothing to carry, so just the final NONE chunk.
            new StructuredReplyHeader(REPLY_FLAG_DONE, REPLY_TYPE_NONE, r.handle(), 0).encode(headers);
        }
        gather[g++] = headers.slice(start, headers.position() - start);
        if (withData) {
            gather[g++] = r.data();
        }
        return g;
    }
}

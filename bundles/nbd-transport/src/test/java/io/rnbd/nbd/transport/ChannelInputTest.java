package io.rnbd.nbd.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.EOFException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.util.Random;

import org.junit.jupiter.api.Test;

/**
 * Messages shaped like NBD's (a fixed header giving the payload's length, then the payload),
 * read from a channel that has everything queued, as a socket has when the client is ahead:
 * a staging read takes all the room it is given. Every payload arrives whole and in order,
 * whether it came through the staging buffer or straight into its destination; small messages
 * come many to a read; a stream that ends inside a message is an error, between two a clean end.
 */
class ChannelInputTest {
    private static final int HDR = 28;
    private static final int STAGING = 64 * 1024;
    private static final int LARGE = 128 * 1024;
    private static final int LARGES = 8;
    private static final int SMALL = 4096;
    private static final int SMALLS = 16;

    /** A socket with the whole stream queued: every read takes as much as fits. */
    private static final class QueuedChannel implements ReadableByteChannel {
        private final ByteBuffer src;
        private final int maxPerRead;
        int reads;

        QueuedChannel(ByteBuffer src) {
            this(src, Integer.MAX_VALUE);
        }

        /** A peer whose bytes trickle in: at most {@code maxPerRead} per read. */
        QueuedChannel(ByteBuffer src, int maxPerRead) {
            this.src = src;
            this.maxPerRead = maxPerRead;
        }

        @Override
        public int read(ByteBuffer dst) {
            if (!src.hasRemaining()) {
                return -1;
            }
            reads++;
            int n = Math.min(maxPerRead, Math.min(dst.remaining(), src.remaining()));
            dst.put(src.slice(src.position(), n));
            src.position(src.position() + n);
            return n;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
        }
    }

    private static ByteBuffer stream(int[] lengths, Random r) {
        int total = 0;
        for (int len : lengths) {
            total += HDR + len;
        }
        ByteBuffer b = ByteBuffer.allocate(total);
        for (int i = 0; i < lengths.length; i++) {
            b.putInt(lengths[i]).putInt(i);
            b.put(new byte[HDR - 8]);
            byte[] payload = new byte[lengths[i]];
            r.nextBytes(payload);
            b.put(payload);
        }
        return b.flip();
    }

    /** The next message's payload, read as the gateway reads a request: header, then payload into its own buffer. */
    private static ByteBuffer message(ChannelInput in, int index) throws Exception {
        ByteBuffer h = in.need(HDR);
        int len = h.getInt(h.position());
        assertEquals(index, h.getInt(h.position() + 4), "message order");
        h.position(h.position() + HDR);
        ByteBuffer dst = ByteBuffer.allocateDirect(len);
        in.readFully(dst);
        assertFalse(dst.hasRemaining());
        return dst.flip();
    }

    @Test
    void payloadsArriveWholeAndSmallMessagesComeManyToARead() throws Exception {
        int[] lengths = new int[LARGES + SMALLS];
        for (int i = 0; i < lengths.length; i++) {
            lengths[i] = i < LARGES ? LARGE : SMALL;
        }
        ByteBuffer expected = stream(lengths, new Random(7));
        QueuedChannel ch = new QueuedChannel(expected.duplicate());
        ChannelInput in = new ChannelInput(ch, STAGING);

        int readsBeforeSmalls = 0;
        int at = 0;
        for (int i = 0; i < lengths.length; i++) {
            if (i == LARGES) {
                readsBeforeSmalls = ch.reads;
            }
            assertEquals(expected.slice(at + HDR, lengths[i]), message(in, i), "payload of message " + i);
            at += HDR + lengths[i];
        }
        assertFalse(in.await(1), "the stream ends cleanly after the last message");

        int smallReads = ch.reads - readsBeforeSmalls;
        long smallStream = (long) SMALLS * (HDR + SMALL);
        assertTrue(smallReads <= smallStream / STAGING + 2,
                "reads for " + SMALLS + " small messages (" + smallStream + " bytes): " + smallReads);
    }

    @Test
    void bytesThatTrickleInStillMakeWholeMessages() throws Exception {
        int[] lengths = {LARGE, 0, SMALL, LARGE, 1};
        ByteBuffer expected = stream(lengths, new Random(3));
        ChannelInput in = new ChannelInput(new QueuedChannel(expected.duplicate(), 7), STAGING);
        int at = 0;
        for (int i = 0; i < lengths.length; i++) {
            assertEquals(expected.slice(at + HDR, lengths[i]), message(in, i), "payload of message " + i);
            at += HDR + lengths[i];
        }
        assertFalse(in.await(1));
    }

    @Test
    void aStreamThatEndsInsideAHeaderIsAnError() {
        ChannelInput in = new ChannelInput(new QueuedChannel(ByteBuffer.allocate(HDR - 1)), STAGING);
        assertThrows(EOFException.class, () -> in.need(HDR));
    }

    @Test
    void aStreamThatEndsInsideALargePayloadIsAnError() throws Exception {
        ByteBuffer whole = stream(new int[] {LARGE}, new Random(1));
        ChannelInput in = new ChannelInput(new QueuedChannel(whole.limit(whole.limit() - 1)), STAGING);
        in.need(HDR).position(HDR);
        assertThrows(EOFException.class, () -> in.readFully(ByteBuffer.allocateDirect(LARGE)));
    }
}

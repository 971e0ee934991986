package io.rnbd.nbd.gateway.internal;

import java.util.concurrent.atomic.LongAdder;

/** Counters of an {@link NbdServer}, kept out of the engine. */
public final class NbdServerStats {
    /** A point-in-time copy. */
    public record Snapshot(long connections, long refused, long handshakeTimeouts, long dropped, long requests,
                           long errors, long bytesRead, long bytesWritten, long idleTimeouts, long repliesInline,
                           long inlineWrites, long readerPolls, long readerPollHits) {
    }

    final LongAdder connections = new LongAdder();
    final LongAdder refused = new LongAdder();
    final LongAdder handshakeTimeouts = new LongAdder();
    final LongAdder dropped = new LongAdder();
    final LongAdder requests = new LongAdder();
    final LongAdder errors = new LongAdder();
    final LongAdder bytesRead = new LongAdder();
    final LongAdder bytesWritten = new LongAdder();
    /** Negotiated connections closed for sending nothing within the idle timeout. */
    final LongAdder idleTimeouts = new LongAdder();
    /** Replies written by the thread that completed the request, without the writer thread. */
    final LongAdder repliesInline = new LongAdder();
    /**
     * Socket writes that carried them: a completion batch's replies leave in one
     * ({@code repliesInline / inlineWrites} replies per write).
     */
    final LongAdder inlineWrites = new LongAdder();
    /** Busy polls a reader began for its next request (poll.usec), and those that found it. */
    final LongAdder readerPolls = new LongAdder();
    final LongAdder readerPollHits = new LongAdder();

    public Snapshot snapshot() {
        return new Snapshot(connections.sum(), refused.sum(), handshakeTimeouts.sum(), dropped.sum(), requests.sum(),
                errors.sum(), bytesRead.sum(), bytesWritten.sum(), idleTimeouts.sum(), repliesInline.sum(),
                inlineWrites.sum(), readerPolls.sum(), readerPollHits.sum());
    }

    public void reset() {
        for (LongAdder a : new LongAdder[] {connections, refused, handshakeTimeouts, dropped, requests, errors,
                bytesRead, bytesWritten, idleTimeouts, repliesInline, inlineWrites, readerPolls,
                readerPollHits}) {
            a.reset();
        }
    }
}

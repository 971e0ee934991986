package io.rnbd.rtrs.client.internal;

import io.rnbd.rtrs.api.IoDone;

import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One request of a session, from submission to its single completion. Guarded by the session
 * lock, except the copy of a write's data, which the request's own monitor guards
 * ({@link #copyData}, {@link #closeCopy}).
 */
final class ClientRequest {
    private static final AtomicInteger SUBMITTERS = new AtomicInteger();
    /** Each submitting thread's number, handed out in order of first submission. */
    private static final ThreadLocal<Integer> SUBMITTER = ThreadLocal.withInitial(SUBMITTERS::getAndIncrement);

    final boolean write;
    final ByteBuffer usrHdr;
    final ByteBuffer data;
    final IoDone done;
    final int dataLen;
    final int usrLen;
    /**
     * The data travels from and to the caller's own buffer, registered for the request while
     * it is in flight ({@link PathIo}), not through its permit's buffer: no copy. For a read
     * whose buffer an adapter can reach (direct memory), which is registered per read in any
     * case; for a write of at least {@link #WRITE_IN_PLACE_MIN} bytes, where a registration
     * costs less than the copy it saves (Linux registers every request's pages, fast-reg MRs).
     */
    final boolean inPlace;
    static final int WRITE_IN_PLACE_MIN = 32 * 1024;
    /**
     * The submitting thread, where the kernel records the submitting CPU in the permit
     * ({@code permit->cpu_id}): it picks the IO connection, so one thread's IO shares one
     * connection and a burst of it leaves in one post, as one CPU's IO does in the kernel.
     */
    final int submitter = SUBMITTER.get();
    int permit = -1;
    ClientPath path;
    final Set<ClientPath> tried = new HashSet<>();
    long sentNanos;
    boolean finished;
    ScheduledFuture<?> expiry;
    /** A write's data is in its permit's buffer, or must no longer go there. Guarded by this. */
    private boolean copied;

    ClientRequest(boolean write, ByteBuffer usrHdr, ByteBuffer data, IoDone done) {
        this.write = write;
        this.usrHdr = usrHdr.duplicate();
        this.data = data.duplicate();
        this.done = done;
        this.dataLen = data.remaining();
        this.usrLen = usrHdr.remaining();
        this.inPlace = data.isDirect() && (write ? dataLen >= WRITE_IN_PLACE_MIN : dataLen > 0);
    }

    /**
     * Not under the session lock: copy a write's data to {@code slot} (its permit's buffer),
     * once. A failover may post the request again from another thread before its first post
     * ran; whichever post comes first copies, the other waits for it and copies nothing.
     */
    synchronized void copyData(ByteBuffer slot) {
        if (!copied) {
            slot.put(data.duplicate());
            copied = true;
        }
    }

    /**
     * The permit's buffer goes to the next request: a post of this one that has not run yet
     * must not copy into it any more.
     */
    synchronized void closeCopy() {
        copied = true;
    }
}

package io.rnbd.rtrs.client;

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

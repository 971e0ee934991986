package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.rtrs.proto.ConRsp;
import io.rnbd.rtrs.proto.RdmaReadMsg;
import io.rnbd.rtrs.proto.RdmaWriteMsg;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A session's permits — the server's queue depth, each permit one chunk of the session's
 * buffer — and a request's way through them (Linux's rtrs_clt_get_permit and
 * rtrs_clt_request): a permit, or FIFO among the waiters; a path, or pending while none is
 * usable or a fence is out; its single completion. Guarded by the session lock, but for the
 * negotiated sizes, which are volatile.
 */
final class Permits {
    private final ClientSession session;
    private final Deque<ClientRequest> waiters = new ArrayDeque<>();
    private final Deque<ClientRequest> pending = new ArrayDeque<>();
    private final Deque<Integer> free = new ArrayDeque<>();
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Permits.class);

    /** Whether an io.timeout.ms expiry was logged since a path was last usable. */
    private boolean expiryLogged;
    private volatile int queueDepth;
    private volatile int maxIoSize;
    private volatile int maxHdrSize;
    private int slotSize;
    private ByteBuffer memory;

    Permits(ClientSession session) {
        this.session = session;
    }

    /**
     * First CON_RSP fixes the session's queue depth and chunk size; later ones must agree. A
     * server restarted with another queue depth or chunk size (Linux's sess_queue_depth,
     * max_chunk_size; the appliance's queue.depth, chunk.size) is adopted when nothing uses
     * the old: no other path connected ({@code othersConnected}) and every permit free. Linux's
     * client refuses it for good instead ("queue depth changed", reconnect_attempts = -1, until
     * a manual reconnect). Returns an errno: EAGAIN while the old sizes are in use (the path
     * tries again later), 0 when agreed or adopted.
     */
    int negotiated(ConRsp rsp, boolean othersConnected) {
        if (queueDepth != 0 && !(rsp.queueDepth() == queueDepth && rsp.maxIoSize() == maxIoSize
                && rsp.maxHdrSize() == maxHdrSize)) {
            if (othersConnected || free.size() != queueDepth || !pending.isEmpty()) {
                return Errno.EAGAIN;
            }
            LOG.info("session {}: the server now says queue depth {}, max IO {} (was {}, {}): nothing uses the old, "
                    + "adopting it", session.name(), rsp.queueDepth(), rsp.maxIoSize(), queueDepth, maxIoSize);
            queueDepth = 0;
            free.clear();
        }
        if (queueDepth == 0) {
            queueDepth = rsp.queueDepth();
            maxIoSize = rsp.maxIoSize();
            maxHdrSize = rsp.maxHdrSize();
            // a permit's buffer holds [data][user header][RTRS message], as the server's chunk
            slotSize = rsp.chunkSize();
            memory = ByteBuffer.allocateDirect(Math.multiplyExact(queueDepth, slotSize));
            for (int i = 0; i < queueDepth; i++) {
                free.add(i);
            }
            List<ClientRequest> w = new ArrayList<>(waiters);
            waiters.clear();
            for (ClientRequest r : w) {
                submit(r);
            }
            return 0;
        }
        return 0;
    }

    int queueDepth() {
        return queueDepth;
    }

    int maxIoSize() {
        return maxIoSize;
    }

    int maxHdrSize() {
        return maxHdrSize;
    }

    int slotSize() {
        return slotSize;
    }

    ByteBuffer memory() {
        return memory.duplicate().clear();
    }

    void submit(ClientRequest r) {
        if (session.closed()) {
            complete(r, Errno.ESHUTDOWN, false);
            return;
        }
        if (session.state() == SessionState.FAILED) {
            complete(r, Errno.EIO, false);
            return;
        }
        if (queueDepth > 0 && !fits(r)) {
            complete(r, Errno.EMSGSIZE, false);
            return;
        }
        if (queueDepth == 0 || free.isEmpty()) {
            if (queueDepth == 0 && session.cfg.ioTimeoutMs() == 0) {
                complete(r, Errno.EIO, false);
                return;
            }
            waiters.add(r);
            if (queueDepth == 0) {
                expireLater(r);
            }
            return;
        }
        start(r, free.poll());
    }

    /** rtrs_clt_request and rtrs_clt_{write,read}_req's limits: the header, and the whole in one chunk. */
    private boolean fits(ClientRequest r) {
        int trailer = r.write ? RdmaWriteMsg.SIZE : RdmaReadMsg.size(r.dataLen == 0 ? 0 : 1);
        return r.dataLen <= maxIoSize && (long) r.usrLen + trailer <= maxHdrSize
                && (long) r.dataLen + r.usrLen + trailer <= slotSize;
    }

    /**
     * Give the request its permit's buffer, put its header there and send it. A write's data
     * is copied in by the post itself ({@link ClientRequest#copyData}), after the lock is released.
     */
    private void start(ClientRequest r, int permit) {
        if (!fits(r)) {
            free.push(permit);
            complete(r, Errno.EMSGSIZE, false);
            return;
        }
        r.permit = permit;
        int base = permit * slotSize;
        ByteBuffer m = memory.duplicate().clear();
        m.position(base + r.dataLen);
        m.put(r.usrHdr.duplicate());
        if (r.write) {
            new RdmaWriteMsg(r.usrLen).encode(m);
        }
        dispatch(r);
    }

    /**
     * Send {@code r} on a path, or queue it while no path is usable. New IO also waits while
     * a fence is outstanding (see {@link Failover#barrier}).
     */
    void dispatch(ClientRequest r) {
        if (session.failover.barrier()) {
            if (session.cfg.ioTimeoutMs() == 0 && session.paths.stream().noneMatch(ClientPath::usable)) {
                complete(r, Errno.EIO, true);
                return;
            }
            pending.add(r);
            expireLater(r);
            return;
        }
        send(r);
    }

    /** Send {@code r} on the path the policy picks, past any fence barrier; or queue it. */
    void send(ClientRequest r) {
        ClientPath p = session.mp.choose(session.paths, r);
        if (p == null) {
            if (session.cfg.ioTimeoutMs() == 0) {
                complete(r, Errno.EIO, true);
            } else {
                pending.add(r);
                expireLater(r);
            }
            return;
        }
        p.io.post(r);
    }

    /** A path is up or a fence was answered: what waited for a path goes out, unless a fence is still out. */
    void releasePending() {
        if (session.failover.barrier()) {
            return;
        }
        expiryLogged = false;
        if (pending.isEmpty()) {
            return;
        }
        List<ClientRequest> w = new ArrayList<>(pending);
        pending.clear();
        for (ClientRequest r : w) {
            dispatch(r);
        }
    }

    /** Fail {@code r} with EIO after {@code io.timeout.ms} unless it completes first. */
    void expireLater(ClientRequest r) {
        if (r.expiry == null && session.cfg.ioTimeoutMs() > 0) {
            r.expiry = session.timer.schedule(() -> session.lock.locked(() -> expire(r)), session.cfg.ioTimeoutMs(),
                    TimeUnit.MILLISECONDS);
        }
    }

    private void expire(ClientRequest r) {
        if (r.finished) {
            return;
        }
        if (waiters.remove(r) || pending.remove(r)) {
            expired();
            complete(r, Errno.EIO, true);
            return;
        }
        if (session.failover.holds(r)) {
            // the permit stays reserved until the fence says its chunk is free
            expired();
            complete(r, Errno.EIO, false);
        }
    }

    /** {@link io.rnbd.rtrs.api.RtrsClientSession#failOutstanding}: what {@link #expire} does to each, for all at once. */
    void failOutstanding(int errno) {
        for (ClientRequest r : takeQueued()) {
            complete(r, errno, true);
        }
        for (ClientRequest r : session.failover.waiting()) {
            // the permit stays reserved until the fence says its chunk is free
            complete(r, errno, false);
        }
    }

    /** The first request failed by io.timeout.ms since a path was last usable: say why, once. */
    private void expired() {
        if (!expiryLogged) {
            expiryLogged = true;
            LOG.warn("session {}: IO waited io.timeout.ms ({} ms) for a connected path{}; failing it with EIO, and "
                    + "every request that waits as long, until a path is back", session.name(), session.cfg.ioTimeoutMs(),
                    session.failover.barrier() ? " and its fence" : "");
        }
    }

    /** A response arrived for {@code r}. */
    void finish(ClientRequest r, int errno) {
        if (!r.write && !r.inPlace && errno == 0 && !r.finished) {
            ByteBuffer src = memory.duplicate().clear();
            src.position(r.permit * slotSize).limit(r.permit * slotSize + r.dataLen);
            r.data.duplicate().put(src);
        }
        complete(r, errno, true);
    }

    /**
     * {@code r}'s one completion: its callback runs after the lock. Its permit goes to the
     * next waiter only if {@code releasePermit}: a request the server may still act on keeps it.
     */
    void complete(ClientRequest r, int errno, boolean releasePermit) {
        if (releasePermit && r.permit >= 0) {
            if (r.write) {
                r.closeCopy();
            }
            release(r.permit);
            r.permit = -1;
        }
        if (r.finished) {
            return;
        }
        r.finished = true;
        if (r.expiry != null) {
            r.expiry.cancel(false);
        }
        session.lock.defer(() -> r.done.done(errno));
    }

    private void release(int permit) {
        ClientRequest next = waiters.poll();
        if (next != null) {
            start(next, permit);
        } else {
            free.push(permit);
        }
    }

    /** The requests waiting for a permit, then those waiting for a path: taken out of both queues. */
    List<ClientRequest> takeQueued() {
        List<ClientRequest> all = new ArrayList<>(waiters);
        all.addAll(pending);
        waiters.clear();
        pending.clear();
        return all;
    }
}

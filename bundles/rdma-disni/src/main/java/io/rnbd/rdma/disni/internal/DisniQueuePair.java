package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.RdmaCmId;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmEventHandler;
import io.rnbd.rdma.api.CompletionHandler;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QpState;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RecvWr;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WcOpcode;
import io.rnbd.rdma.api.WcStatus;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rdma.api.WrOpcode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A reliable-connected QP on its own CM id and CQ: the verbs (posting, disconnect, close),
 * its state, and the teardown that flushes what is outstanding. Its CQ is polled and
 * decoded by {@link DisniCq}, its CM id's events handled by {@link DisniQpCm}.
 *
 * <p>Completions: the CQ is polled only by the device's completion thread. DiSNI decodes
 * nothing but wr_id and status of a failed completion, so the provider keeps its own
 * record of every posted request (send and receive queue, posting order) and names
 * requests by a token: bit 63 tells a receive from a send, the rest counts. A send
 * completion also retires the unsignaled sends posted before it (RC completes in order).
 */
final class DisniQueuePair implements QueuePair {
    private static final Logger LOG = LoggerFactory.getLogger(DisniQueuePair.class);
    private static final long RECV_BIT = 1L << 63;

    /** @param foreignSge an SGE named a region that is closed, invalidated or not of this PD */
    record Posted(long token, long wrId, WcOpcode opcode, boolean signaled, boolean foreignSge) {
        WorkCompletion flushed() {
            return new WorkCompletion(wrId, WcStatus.WR_FLUSH_ERR, opcode, 0, false, 0);
        }
    }

    /** A send posted before the connection is up: handed to the adapter on ESTABLISHED. */
    private record Held(SendWr wr, Posted posted) {
    }

    private final DisniDevice device;
    private final DisniProtectionDomain pd;
    private final RdmaCmId id;
    private final QpInit init;
    private final CmEventHandler events;
    private final CompletionHandler completions;
    private final IbvQP qp;
    /** The initiator's connect private data; null on the passive side. */
    private final byte[] connectData;
    private final DisniCq cq;
    /** The completion thread this queue pair's CQ is on: the only one that delivers its completions. */
    private final DisniCqThread cqThread;
    private final DisniQpCm cm;
    private final Object postLock = new Object();
    private final ArrayDeque<Posted> sendQueue = new ArrayDeque<>();
    private final ArrayDeque<Posted> recvQueue = new ArrayDeque<>();
    private final List<Held> held = new ArrayList<>();
    /** Made once: the poll loop runs on every completion event. */
    private final Consumer<WorkCompletion> deliverer = this::deliverPolled;
    private boolean tornDown;
    /** What is posted and not yet handed to the adapter; under the post lock. */
    private final SendChain chain = new SendChain();
    /** The receive being posted; under the post lock. */
    private final RecvPost recv = new RecvPost();
    /**
     * The thread delivering this queue pair's completions, whose posts wait for the round's end;
     * null between rounds. Written by that thread alone and only compared with the reader's own
     * thread, so no lock: another thread can never find itself here.
     */
    private volatile Thread plug;
    /** How many of the chain's requests (the first ones) waited for the round's end. */
    private int deferred;
    /** Deferred requests the adapter refused, to complete as flushed once the post lock is left ({@link #reportLost}). */
    private final List<Posted> lostDeferred = new ArrayList<>();
    private volatile boolean anyLost;
    private long nextToken;
    volatile QpState state = QpState.INIT;
    volatile InetSocketAddress local;
    volatile InetSocketAddress remote;
    private boolean disconnectSent;

    private DisniQueuePair(DisniDevice device, DisniCqThread cqThread, DisniProtectionDomain pd, RdmaCmId id,
                           QpInit init, CmEventHandler events, IbvCQ cq, IbvQP qp, InetSocketAddress remote,
                           byte[] connectData) throws IOException {
        this.device = device;
        this.cqThread = cqThread;
        this.pd = pd;
        this.id = id;
        this.init = init;
        this.events = events;
        this.completions = init.completions();
        this.qp = qp;
        this.connectData = connectData;
        this.remote = remote;
        this.local = (InetSocketAddress) id.getSource();
        this.cq = new DisniCq(this, cq);
        this.cm = new DisniQpCm(this, device, id, connectData);
    }

    /**
     * Creates CQ and QP on a bound id; call under the CM lock.
     *
     * @param connectData the connect's private data for an initiator, null for an accepted QP
     */
    static DisniQueuePair create(DisniDevice device, DisniProtectionDomain pd, RdmaCmId id, QpInit init,
                                 CmEventHandler events, InetSocketAddress remote, byte[] connectData)
            throws RdmaException {
        IbvCQ cq = null;
        DisniCqThread cqThread = device.assignCqThread();
        try {
            cq = device.context().createCQ(cqThread.compChannel(), init.maxSendWr() + init.maxRecvWr(), 0);
            cq.reqNotification(false).execute().free();
            IbvQPInitAttr attr = new IbvQPInitAttr();
            attr.setQp_type(IbvQP.IBV_QPT_RC);
            attr.setSend_cq(cq);
            attr.setRecv_cq(cq);
            attr.cap().setMax_send_wr(init.maxSendWr());
            attr.cap().setMax_recv_wr(init.maxRecvWr());
            attr.cap().setMax_send_sge(init.maxSge());
            attr.cap().setMax_recv_sge(init.maxSge());
            attr.cap().setMax_inline_data(0);
            IbvQP qp = id.createQP(pd.ibv(), attr);
            if (qp == null) {
                throw new IOException("rdma_create_qp returned nothing");
            }
            DisniQueuePair created = new DisniQueuePair(device, cqThread, pd, id, init, events, cq, qp, remote,
                    connectData);
            cqThread.add(created);
            return created;
        } catch (IOException e) {
            if (cq != null) {
                try {
                    cq.destroyCQ();
                } catch (IOException ignored) {
                    // the QP creation error is the one to report
                }
            }
            throw Errors.of("create queue pair", e);
        }
    }

    /** The completion thread that delivers this queue pair's completions. */
    DisniCqThread cqThread() {
        return cqThread;
    }

    /** The target of this QP's CM id. */
    CmTarget cm() {
        return cm;
    }

    /** The ibv_qp behind this QP, for the memory windows' binds. */
    long ibvQpHandle() {
        return ((com.ibm.disni.verbs.impl.NatIbvQP) qp).getObjId();
    }

    @Override
    public RdmaDevice device() {
        return device;
    }

    @Override
    public ProtectionDomain pd() {
        return pd;
    }

    @Override
    public QpState state() {
        return state;
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return remote;
    }

    @Override
    public void postSend(SendWr wr) throws RdmaException {
        postSend(List.of(wr));
    }

    /**
     * The chain as one ibv_post_send, its WRs linked: on rxe every post rings the doorbell
     * with a system call, and the server answers a read with two or three WRs at once. Posted
     * from the thread delivering this queue pair's completions, it waits for the end of the
     * round ({@link #pollAndDeliver}), as a block plug holds bios, so that a round's answers
     * and binds go out in one post.
     */
    @Override
    public void postSend(List<SendWr> wrs) throws RdmaException {
        if (wrs.isEmpty()) {
            return;
        }
        try {
            postSendLocked(wrs);
        } finally {
            reportLost();
        }
    }

    private void postSendLocked(List<SendWr> wrs) throws RdmaException {
        synchronized (postLock) {
            if (state != QpState.RTS && state != QpState.INIT) {
                throw new RdmaException(Errno.ENOTCONN, "queue pair is " + state);
            }
            if (sendQueue.size() + held.size() + wrs.size() > init.maxSendWr()) {
                throw new RdmaException(Errno.ENOMEM, "send queue full (" + init.maxSendWr() + ")");
            }
            if (state == QpState.INIT) {
                // the QP cannot send before RTS; RC semantics still promise delivery
                List<Held> hs = new ArrayList<>(wrs.size());
                for (SendWr wr : wrs) {
                    hs.add(new Held(wr, record(wr, nextToken++ & ~RECV_BIT)));
                }
                held.addAll(hs);
                return;
            }
            // this call's requests in the chain; a chain longer than one post goes out in pieces, in order
            int own = 0;
            try {
                for (SendWr wr : wrs) {
                    if (chain.size() == SendChain.CAPACITY) {
                        int piece = own;
                        own = 0; // posted or, if refused, taken back by submitLocked
                        submitLocked(piece);
                    }
                    Posted p = encode(wr, nextToken++ & ~RECV_BIT);
                    sendQueue.addLast(p);
                    own++;
                }
            } catch (RdmaException e) {
                // what of this call was not posted yet goes: its records and its requests
                for (int i = 0; i < own; i++) {
                    sendQueue.removeLast();
                }
                chain.truncate(chain.size() - own);
                throw e;
            }
            submit(own);
        }
    }

    /** The record of {@code wr} under {@code token}, its SGEs checked. */
    private Posted record(SendWr wr, long token) throws RdmaException {
        return posted(wr, token, DisniWr.sges(wr.sgl(), init.maxSge(), pd, device, DisniWr.SgeSink.NONE));
    }

    private static Posted posted(SendWr wr, long token, boolean foreignSge) {
        return new Posted(token, wr.wrId(), DisniWr.wcOpcode(wr.opcode()), wr.signaled(), foreignSge);
    }

    /** Under the post lock: {@code wr} appended to the chain under {@code token}; its record. */
    private Posted encode(SendWr wr, long token) throws RdmaException {
        chain.add(token, DisniWr.opcode(wr.opcode()), wr.signaled(), wr.imm(),
                wr.opcode().isRdma() ? wr.remoteAddr() : 0, wr.opcode().isRdma() ? wr.rkey() : 0);
        boolean foreign;
        try {
            foreign = DisniWr.sges(wr.sgl(), init.maxSge(), pd, device, chain);
        } catch (RdmaException e) {
            chain.truncate(chain.size() - 1);
            throw e;
        }
        return posted(wr, token, foreign);
    }

    /** Under the post lock: posts what is deferred if {@code n} more requests would not fit the chain. */
    private void makeRoom(int n) throws RdmaException {
        if (chain.size() + n > SendChain.CAPACITY) {
            submitLocked(0);
        }
    }

    /**
     * Under the post lock: the last {@code own} requests of the chain are the caller's; they
     * wait for the end of the round when the caller is delivering this queue pair's completions,
     * and go out now (with what was waiting) otherwise.
     */
    private void submit(int own) throws RdmaException {
        if (plug == Thread.currentThread()) {
            deferred += own;
        } else {
            submitLocked(own);
        }
    }

    /**
     * Under the post lock: posts the chain, of which the last {@code own} requests are the
     * caller's and the ones before were deferred. Requests the adapter did not take leave the
     * send queue's record: the caller's are reported by the exception, as a failed post
     * always was; deferred ones, whose posters were told nothing, complete as flushed and the
     * queue pair fails, as it would on the adapter.
     */
    private void submitLocked(int own) throws RdmaException {
        int n = chain.size();
        int waited = deferred;
        deferred = 0;
        if (tornDown) {
            chain.clear(); // teardown flushed their records
            return;
        }
        long r = chain.post(ibvQpHandle());
        if (r == 0) {
            return;
        }
        int bad = (int) (r >>> 32);
        int errno = (int) r;
        Posted[] lost = new Posted[n - bad];
        for (int i = lost.length - 1; i >= 0; i--) {
            lost[i] = sendQueue.pollLast();
        }
        for (int i = bad; i < waited; i++) {
            lostDeferred.add(lost[i - bad]);
            anyLost = true;
        }
        if (bad < waited) {
            LOG.warn("rdma-disni: ibv_post_send on {} failed (errno {}): {} deferred requests flushed", this, errno,
                    waited - bad);
        }
        if (n - Math.max(bad, waited) > 0 && own > 0) {
            throw new RdmaException(errno, "ibv_post_send");
        }
    }

    /**
     * Outside the post lock, after a post: deferred requests the adapter refused complete as
     * flushed, and the queue pair fails (their posters were told nothing, as on an adapter
     * that moved the queue pair to ERROR).
     */
    private void reportLost() {
        if (!anyLost) {
            return;
        }
        List<Posted> lost;
        synchronized (postLock) {
            lost = new ArrayList<>(lostDeferred);
            lostDeferred.clear();
            anyLost = false;
        }
        if (!lost.isEmpty()) {
            failed(lost.size() + " deferred requests refused by ibv_post_send");
            flush(lost, false);
        }
    }

    /**
     * Posts what the completion handlers posted during a round of deliveries: true if
     * anything went to the adapter, whose completions may then be polled at once (on rxe the
     * post runs the request, and over the loopback the peer's answer, inside the call).
     */
    boolean flushDeferred() {
        synchronized (postLock) {
            if (chain.size() == 0) {
                return false;
            }
            submitDeferredLocked();
        }
        reportLost();
        return true;
    }

    /** Under the post lock: posts the chain, all of it deferred; refused requests go to {@link #lostDeferred}. */
    private void submitDeferredLocked() {
        try {
            submitLocked(0);
        } catch (RdmaException e) {
            throw new IllegalStateException("a deferred post has no caller to throw to", e);
        }
    }

    /**
     * A zero-length bind of the region's memory window, on this send queue, signaled: its
     * completion (IBV_WC_BIND_MW) is the invalidation's. A region without a window (an adapter
     * without windows) loses its remote registration at once, and a signaled zero-length
     * RDMA_WRITE (whose key no adapter checks, IBA C9-88) stands in for the work request: its
     * completion comes in order, on the completion thread, as a window's would.
     */
    @Override
    public void postInvalidate(long wrId, MemoryRegion mr) throws RdmaException {
        postOwn(wrId, WcOpcode.LOCAL_INV, true, ownRegion(mr), DisniQueuePair::unbind);
    }

    private static long unbind(SendChain chain, DisniMemoryRegion r, long token) throws RdmaException {
        if (!r.unbind(chain, token)) {
            r.invalidate();
            chain.add(token, DisniWr.opcode(WrOpcode.RDMA_WRITE), true, 0, 0, 0);
        }
        return 0;
    }

    /**
     * A region without a window loses its remote access here and now: the rkey dies with
     * ibv_dereg_mr, or on rxe from Linux 6.5 with the registration's remote access switched off
     * ({@link MrNative}), and the caller need not wait for the acknowledgement of a stand-in request
     * ({@link #postInvalidate}) from the peer. A region with one is left alone.
     */
    @Override
    public boolean invalidateNow(MemoryRegion mr) throws RdmaException {
        return ownRegion(mr).invalidateNow();
    }

    /** A bind of the region's window over all of it, on this send queue, unsignaled; else a re-registration. */
    @Override
    public int postReregister(long wrId, MemoryRegion mr) throws RdmaException {
        DisniMemoryRegion r = ownRegion(mr);
        long key = postOwn(wrId, WcOpcode.REG_MR, false, r, (c, region, token) -> region.rebind(c, token));
        return key >= 0 ? (int) key : r.reregister();
    }

    /**
     * Appends one work request of the provider's own (a bind) to the chain under the send
     * queue's token {@code token}. Given the chain and region rather than capturing them: no
     * allocation per request.
     */
    @FunctionalInterface
    private interface OwnPost {
        /** What the request gives (a key); negative when nothing was appended. */
        long append(SendChain chain, DisniMemoryRegion r, long token) throws RdmaException;
    }

    /**
     * A send queue entry for a work request the provider builds itself: recorded as the
     * action appends it to the chain, posted as {@link #postSend}'s are, taken back when the
     * action fails or appends nothing.
     */
    private long postOwn(long wrId, WcOpcode opcode, boolean signaled, DisniMemoryRegion r, OwnPost action)
            throws RdmaException {
        try {
            return postOwnLocked(wrId, opcode, signaled, r, action);
        } finally {
            reportLost();
        }
    }

    private long postOwnLocked(long wrId, WcOpcode opcode, boolean signaled, DisniMemoryRegion r, OwnPost action)
            throws RdmaException {
        synchronized (postLock) {
            long token = reserveSendSlot();
            makeRoom(1);
            long result = action.append(chain, r, token);
            if (result < 0) {
                return result;
            }
            sendQueue.addLast(new Posted(token, wrId, opcode, signaled, false));
            submit(1);
            return result;
        }
    }

    private DisniMemoryRegion ownRegion(MemoryRegion mr) throws RdmaException {
        if (!(mr instanceof DisniMemoryRegion r) || mr.pd() != pd) {
            throw new RdmaException(Errno.EINVAL, "region of another protection domain");
        }
        return r;
    }

    /** Under the post lock: a token for one more send queue entry, if the queue pair is up and has room. */
    private long reserveSendSlot() throws RdmaException {
        if (state != QpState.RTS) {
            throw new RdmaException(Errno.ENOTCONN, "queue pair is " + state);
        }
        if (sendQueue.size() + held.size() + 1 > init.maxSendWr()) {
            throw new RdmaException(Errno.ENOMEM, "send queue full (" + init.maxSendWr() + ")");
        }
        return nextToken++ & ~RECV_BIT;
    }

    /**
     * ESTABLISHED: RTS, and the held sends go to the adapter in posting order. The
     * initiator's event carries the acceptor's private data (IB: the REP's whole 196 bytes).
     */
    void established(byte[] acceptData) {
        synchronized (postLock) {
            if (state != QpState.INIT) {
                return;
            }
            state = QpState.RTS;
            // handed over as deferred requests: any the adapter refuses complete as flushed
            for (Held h : held) {
                try {
                    makeRoom(1);
                    encode(h.wr(), h.posted().token());
                } catch (RdmaException e) {
                    LOG.warn("rdma-disni: posting a held send on {} failed", this, e);
                    lostDeferred.add(h.posted());
                    anyLost = true;
                    continue;
                }
                sendQueue.addLast(h.posted());
                deferred++;
            }
            held.clear();
            submitDeferredLocked();
        }
        emit(new CmEvent(CmEvent.Type.ESTABLISHED, 0, "established", connectData == null ? null : acceptData));
        reportLost();
    }

    @Override
    public void postRecv(RecvWr wr) throws RdmaException {
        synchronized (postLock) {
            recv.start();
            boolean foreign = DisniWr.sges(wr.sgl(), init.maxSge(), pd, device, recv);
            if (state == QpState.ERROR || state == QpState.CLOSED) {
                throw new RdmaException(Errno.ENOTCONN, "queue pair is " + state);
            }
            if (recvQueue.size() >= init.maxRecvWr()) {
                throw new RdmaException(Errno.ENOMEM, "receive queue full (" + init.maxRecvWr() + ")");
            }
            long token = nextToken++ | RECV_BIT;
            int errno = recv.post(ibvQpHandle(), token);
            if (errno != 0) {
                throw new RdmaException(errno, "ibv_post_recv failed: " + Errno.name(errno) + " (errno " + errno + ")");
            }
            recvQueue.addLast(new Posted(token, wr.wrId(), WcOpcode.RECV, true, foreign));
        }
    }

    /** Whether {@code cq}, the CQ a completion event names, is this queue pair's. */
    boolean completesOn(long cq) {
        return this.cq.is(cq);
    }

    /**
     * On the completion thread: polls and delivers (CqPolling.drain); true when the budget ran
     * out before the CQ was empty, and this must be called again.
     */
    boolean pollAndDeliver(int budget) {
        plug = Thread.currentThread();
        try {
            return CqPolling.drain(cq, budget, deliverer);
        } finally {
            plug = null;
            flushDeferred();
        }
    }

    /** The record of the request a completion names by {@code token}; null if it was flushed already. */
    Posted retire(long token) {
        synchronized (postLock) {
            return (token & RECV_BIT) != 0 ? retire(recvQueue, token) : retire(sendQueue, token);
        }
    }

    /** Removes the entry for token and, on the send queue, the unsignaled ones before it. */
    private static Posted retire(ArrayDeque<Posted> q, long token) {
        while (!q.isEmpty()) {
            Posted head = q.pollFirst();
            if (head.token() == token) {
                return head;
            }
        }
        return null;
    }

    private void deliverPolled(WorkCompletion wc) {
        if (!wc.ok()) {
            failed(wc);
        }
        deliver(wc);
    }

    private void deliver(WorkCompletion wc) {
        try {
            completions.onCompletion(this, wc);
        } catch (RuntimeException e) {
            LOG.warn("rdma-disni: completion handler of {} threw", this, e);
        }
    }

    void emit(CmEvent ev) {
        try {
            events.onEvent(this, ev);
        } catch (RuntimeException e) {
            LOG.warn("rdma-disni: CM event handler of {} threw", this, e);
        }
    }

    /**
     * An error completion: the adapter moved the QP to ERROR; tell the peer too. Before
     * the connection is up (INIT) the only source is the CM itself, which moves the QP to
     * ERROR when the connect fails (REJECTED, UNREACHABLE...) before it reports that on
     * the CM thread: the flushes of RECVs posted meanwhile may be polled first, and the
     * connect failure must still be reported (connectFailed), so INIT is left to it.
     */
    private void failed(WorkCompletion first) {
        // the string only for the one call per connection that logs: a torn-down QP flushes hundreds
        if (state == QpState.RTS) {
            failed("first error completion " + first.status() + " " + first.opcode() + " (wr " + first.wrId() + ")");
        }
    }

    private void failed(String why) {
        if (state == QpState.RTS) {
            state = QpState.ERROR;
            // once per connection: a flush first means the adapter moved the QP to ERROR for
            // something its peer did or it saw on the wire, with no completion of ours to say it
            LOG.info("rdma-disni: {} in ERROR: {}", this, why);
            sendDisconnect();
        }
    }

    void sendDisconnect() {
        try {
            device.cm(() -> {
                if (!disconnectSent && !tornDown) {
                    disconnectSent = true;
                    id.disconnect();
                }
                return null;
            });
        } catch (IOException e) {
            LOG.debug("rdma-disni: rdma_disconnect", e);
        }
    }

    /** The connect failed (the CM moved the QP to ERROR): the event, and the flush of the held sends. */
    void connectFailed(CmEvent ev) {
        List<Posted> never = new ArrayList<>();
        synchronized (postLock) {
            if (state != QpState.INIT) {
                return;
            }
            state = QpState.ERROR;
            held.forEach(h -> never.add(h.posted()));
            held.clear();
        }
        emit(ev);
        // posted RECVs flush through the CQ (the CM moved the QP to ERROR); held sends never reached it
        cqThread.deliver(() -> never.forEach(p -> deliver(p.flushed())), false);
    }

    /**
     * The device goes (called after its completion thread stopped): DEVICE_REMOVAL, then
     * the QP is destroyed and what was posted flushes; the QP stays in ERROR until closed.
     */
    void deviceRemoved() {
        synchronized (postLock) {
            if (state == QpState.CLOSED || tornDown) {
                return;
            }
            state = QpState.ERROR;
        }
        emit(CmEvent.of(CmEvent.Type.DEVICE_REMOVAL));
        List<Posted> flushed = List.of();
        try {
            flushed = device.cm(this::teardownLocked);
        } catch (IOException e) {
            LOG.debug("rdma-disni: teardown of {} on device removal", this, e);
        }
        flush(flushed, true);
    }

    @Override
    public void disconnect() {
        if (state == QpState.RTS || state == QpState.INIT) {
            state = QpState.ERROR;
        }
        sendDisconnect();
    }

    /** Disconnects, destroys, and delivers the flushes of everything still posted before returning. */
    @Override
    public void close() {
        List<Posted> flushed = List.of();
        try {
            flushed = device.cm(() -> {
                List<Posted> f = teardownLocked();
                state = QpState.CLOSED;
                return f;
            });
        } catch (IOException e) {
            LOG.debug("rdma-disni: close {}", this, e);
        }
        flush(flushed, true);
    }

    /** Cleanup of a QP whose connection never started (under the CM lock). */
    void closeLocked() throws IOException {
        List<Posted> f = teardownLocked();
        state = QpState.CLOSED;
        flush(f, false);
    }

    /**
     * Destroys a QP that was never handed out (its accept failed; under the CM lock): what
     * the setup hook posted is dropped without completions, as ibv_destroy_qp drops it.
     */
    void discardLocked() {
        try {
            teardownLocked();
        } catch (IOException e) {
            LOG.debug("rdma-disni: destroy of a queue pair whose accept failed", e);
        }
        state = QpState.CLOSED;
    }

    private void flush(List<Posted> flushed, boolean wait) {
        if (!flushed.isEmpty()) {
            cqThread.deliver(() -> flushed.forEach(p -> deliver(p.flushed())), wait);
        }
    }

    /** Destroys QP, CQ and CM id once (under the CM lock); returns what is still outstanding. */
    private List<Posted> teardownLocked() throws IOException {
        List<Posted> flushed = new ArrayList<>();
        synchronized (postLock) {
            if (tornDown) {
                return flushed;
            }
            tornDown = true;
            if (state != QpState.CLOSED) {
                state = QpState.ERROR;
            }
            flushed.addAll(sendQueue);
            held.forEach(h -> flushed.add(h.posted()));
            flushed.addAll(recvQueue);
            sendQueue.clear();
            held.clear();
            recvQueue.clear();
            chain.clear();
            deferred = 0;
        }
        device.forget(id);
        device.forget(this);
        cq.destroyWith(id, this::disconnectOnClose);
        return flushed;
    }

    /** Teardown, under the CQ lock: the peer is told unless it was already. */
    private void disconnectOnClose() {
        try {
            if (!disconnectSent) {
                disconnectSent = true;
                id.disconnect();
            }
        } catch (IOException e) {
            LOG.debug("rdma-disni: disconnect on close", e);
        }
    }

    @Override
    public String toString() {
        return "disni-qp[" + device.name() + " " + local + " -> " + remote + " " + state + "]";
    }
}

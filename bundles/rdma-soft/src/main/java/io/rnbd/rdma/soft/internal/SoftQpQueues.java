package io.rnbd.rdma.soft.internal;

import io.rnbd.rdma.api.CmEvent;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RecvWr;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.WcOpcode;
import io.rnbd.rdma.api.WcStatus;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rdma.api.WrOpcode;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A queue pair's work queues (siw's SQ, RQ and ORQ) and their completions: the requests
 * posted from any thread, counted against the queue depths until they complete; the send
 * and receive queues the IO thread took them into; the requests on the wire in posting
 * order; and their completions (success, error, flush), queued as callbacks of the QP's
 * IO thread. The posted queues and counts are concurrent; the rest is guarded by the
 * QP's lock.
 */
final class SoftQpQueues {
    /** A request on the wire, or one that failed locally and completes when its turn comes. */
    record Sent(SendWr wr, WcStatus localError) {
    }

    private final SoftQp qp;
    private final SoftReactor reactor;

    final ConcurrentLinkedQueue<SendWr> postedSends = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<RecvWr> postedRecvs = new ConcurrentLinkedQueue<>();
    private final AtomicInteger sendCount = new AtomicInteger();
    private final AtomicInteger recvCount = new AtomicInteger();

    // guarded by the QP's lock
    final ArrayDeque<SendWr> sendQ = new ArrayDeque<>();
    final ArrayDeque<Sent> inflight = new ArrayDeque<>();
    final ArrayDeque<RecvWr> recvQ = new ArrayDeque<>();

    SoftQpQueues(SoftQp qp, SoftReactor reactor) {
        this.qp = qp;
        this.reactor = reactor;
    }

    /** Post {@code chain} whole, or nothing of it when it does not fit in {@code max} outstanding. */
    void postSends(List<SendWr> chain, int max) throws RdmaException {
        int n = chain.size();
        if (sendCount.addAndGet(n) > max) {
            sendCount.addAndGet(-n);
            throw new RdmaException(Errno.ENOMEM, "send queue full (" + max + ")");
        }
        postedSends.addAll(chain);
    }

    void postRecv(RecvWr wr, int max) throws RdmaException {
        if (recvCount.incrementAndGet() > max) {
            recvCount.decrementAndGet();
            throw new RdmaException(Errno.ENOMEM, "receive queue full (" + max + ")");
        }
        postedRecvs.add(wr);
    }

    void takePosted() {
        RecvWr r;
        while ((r = postedRecvs.poll()) != null) {
            recvQ.add(r);
        }
        SendWr s;
        while ((s = postedSends.poll()) != null) {
            sendQ.add(s);
        }
    }

    /** Drop everything posted without completions, as ibv_destroy_qp does. */
    void dropPosted() {
        postedRecvs.clear();
        recvQ.clear();
        recvCount.set(0);
        postedSends.clear();
        sendQ.clear();
        sendCount.set(0);
    }

    void flushAll() {
        takePosted();
        Sent s;
        while ((s = inflight.poll()) != null) {
            completeSend(s, s.localError() != null ? s.localError() : WcStatus.WR_FLUSH_ERR);
        }
        SendWr w;
        while ((w = sendQ.poll()) != null) {
            completeSend(new Sent(w, null), WcStatus.WR_FLUSH_ERR);
        }
        RecvWr r;
        while ((r = recvQ.poll()) != null) {
            completeRecv(r, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0);
        }
    }

    void completeLocalErrors() {
        Sent head = inflight.peek();
        if (head != null && head.localError() != null) {
            inflight.poll();
            completeSend(head, head.localError());
            qp.toError(CmEvent.of(CmEvent.Type.DISCONNECTED), false);
        }
    }

    /** The peer placed the next {@code count} of our SENDs and WRITEs: complete them, in order. */
    boolean acknowledged(int count) {
        for (int i = 0; i < count; i++) {
            Sent head = inflight.peek();
            if (head == null || head.localError() != null || head.wr().opcode() == WrOpcode.RDMA_READ) {
                return false;
            }
            inflight.poll();
            completeSend(head, WcStatus.SUCCESS);
        }
        return true;
    }

    void completeSend(Sent s, WcStatus status) {
        sendCount.decrementAndGet();
        SendWr wr = s.wr();
        if (status == WcStatus.SUCCESS && !wr.signaled()) {
            return;
        }
        WcOpcode op;
        switch (wr.opcode()) {
            case RDMA_WRITE:
            case RDMA_WRITE_WITH_IMM:
                op = WcOpcode.RDMA_WRITE;
                break;
            case RDMA_READ:
                op = WcOpcode.RDMA_READ;
                break;
            default:
                op = WcOpcode.SEND;
                break;
        }
        int len = status == WcStatus.SUCCESS ? (int) wr.totalLength() : 0;
        deliver(new WorkCompletion(wr.wrId(), status, op, len, false, 0));
    }

    void completeRecv(RecvWr r, WcStatus status, WcOpcode op, int len, boolean hasImm, int imm) {
        completeRecv(r, status, op, len, hasImm, imm, null);
    }

    void completeRecv(RecvWr r, WcStatus status, WcOpcode op, int len, boolean hasImm, int imm,
                      Integer invalidatedRkey) {
        recvCount.decrementAndGet();
        deliver(new WorkCompletion(r.wrId(), status, op, len, hasImm, imm, invalidatedRkey));
    }

    /** A request done without the wire (a local invalidation): its completion, as the next callback. */
    void completeLocal(long wrId, WcOpcode op) {
        deliver(new WorkCompletion(wrId, WcStatus.SUCCESS, op, 0, false, 0));
    }

    private void deliver(WorkCompletion wc) {
        QpInit i = qp.init;
        if (i != null) {
            SoftQp q = qp;
            reactor.callback(() -> i.completions().onCompletion(q, wc));
        }
    }
}

package io.rnbd.rtrs.server.internal;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RecvPool;
import io.rnbd.rdma.api.SendSignaler;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WcStatus;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rdma.api.WrOpcode;
import io.rnbd.rtrs.proto.Rtrs;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * One accepted connection of a path. Its CON_REQ came with the connect request and its
 * CON_RSP left with the accept, as in Linux; from then on the path's session lock guards it.
 */
final class ServerCon implements Connection {
    final DeviceContext dev;
    final ServerPath path;
    final int cid;
    private final AtomicLong sendSeq = new AtomicLong();
    /** IO-path posts (responses, read data, heartbeats): unsignaled but one in {@link Rtrs#SIGNAL_INTERVAL}. */
    private final SendSignaler signaler = new SendSignaler(Rtrs.SIGNAL_INTERVAL);
    /** What to do when a signaled request completes, with whether it succeeded; run with false at close. */
    private final Map<Long, Consumer<Boolean>> sendDone = new ConcurrentHashMap<>();
    private final RecvPool recvs;
    private volatile QueuePair qp;
    private volatile boolean closed;

    ServerCon(DeviceContext dev, ServerPath path, int cid, RecvPool recvs) {
        this.dev = dev;
        this.path = path;
        this.cid = cid;
        this.recvs = recvs;
    }

    /** Between the queue pair's creation and the accept: nothing the client sends may find no RECV. */
    @Override
    public void setUp(QueuePair q) throws RdmaException {
        this.qp = q;
        recvs.postAll(q);
    }

    @Override
    public void acceptFailed(int errno) {
        path.fail(errno, "accept failed");
    }

    QueuePair qp() {
        return qp;
    }

    @Override
    public void onCompletion(QueuePair q, WorkCompletion wc) {
        if (!RecvPool.isRecv(wc.wrId())) {
            Consumer<Boolean> r = sendDone.remove(wc.wrId());
            if (r != null) {
                r.accept(wc.ok());
            }
            if (!wc.ok() && wc.status() != WcStatus.WR_FLUSH_ERR) {
                path.fail(wc.status().errno(), "send failed: " + wc.status());
            }
            return;
        }
        if (!wc.ok()) {
            if (wc.status() != WcStatus.WR_FLUSH_ERR) {
                path.fail(wc.status().errno(), "receive failed: " + wc.status());
            }
            return;
        }
        if (path.onRecv(this, wc, recvs.data(RecvPool.slot(wc.wrId()), wc.byteLen()))) {
            try {
                recvs.post(qp, RecvPool.slot(wc.wrId()));
            } catch (RdmaException e) {
                path.fail(e.errno(), "cannot repost receive");
            }
        }
    }

    @Override
    public void onEvent(QueuePair q, CmEvent event) {
        if (event.type() == CmEvent.Type.ESTABLISHED) {
            return;
        }
        path.fail(event.status() == 0 ? Errno.ECONNRESET : event.status(), "connection " + event.detail());
    }

    /** SEND a message built by {@code enc} in its own registered buffer; {@code then} runs on completion. */
    void send(int size, Consumer<ByteBuffer> enc, Runnable then) {
        MemoryRegion mr = null;
        try {
            ByteBuffer b = ByteBuffer.allocateDirect(size);
            enc.accept(b);
            b.flip();
            mr = dev.pd.register(b, Access.of(Access.LOCAL_WRITE));
            MemoryRegion m = mr;
            long id = sendSeq.incrementAndGet();
            sendDone.put(id, ok -> {
                m.close();
                if (then != null) {
                    then.run();
                }
            });
            qp.postSend(SendWr.send(id, List.of(Sge.whole(mr))));
        } catch (RdmaException e) {
            if (mr != null) {
                mr.close();
            }
            path.fail(e.errno(), "cannot send");
        }
    }

    /** A heartbeat or its acknowledgement: an empty RDMA_WRITE_WITH_IMM (rtrs_post_rdma_write_imm_empty). */
    void writeImmEmpty(int imm) throws RdmaException {
        qp.postSend(emptyWriteImm(imm));
    }

    SendWr emptyWriteImm(int imm) {
        return new SendWr(sendSeq.incrementAndGet(), WrOpcode.RDMA_WRITE_WITH_IMM, List.of(), imm, 0, 0,
                signaler.next());
    }

    /** RDMA_WRITE of read data into the client's region (rdma_write_sg). */
    SendWr dataWrite(Sge src, long remoteAddr, int rkey) {
        return new SendWr(sendSeq.incrementAndGet(), WrOpcode.RDMA_WRITE, List.of(src), 0, remoteAddr, rkey,
                signaler.next());
    }

    /** SEND_WITH_INV of the client's read region: it asked with NEED_INVAL. */
    SendWr invalidate(int rkey) {
        return new SendWr(sendSeq.incrementAndGet(), WrOpcode.SEND_WITH_INV, List.of(), rkey, 0, 0, signaler.next());
    }

    /** The response carrying the chunk's new rkey under always_invalidate: SEND_WITH_IMM of an RKEY_RSP. */
    SendWr rkeyResponse(int imm, MemoryRegion mr, int off, int len) {
        return new SendWr(sendSeq.incrementAndGet(), WrOpcode.SEND_WITH_IMM, List.of(new Sge(mr, off, len)), imm, 0,
                0, signaler.next());
    }

    /**
     * always_invalidate (rtrs_srv_inv_rkey): kill the rkey of a chunk's registration through
     * this connection's queue pair; {@code then} runs on its completion, with whether it took
     * effect (false when the connection closed first), under no lock.
     */
    void invalidateChunk(MemoryRegion mr, Consumer<Boolean> then) throws RdmaException {
        long id = sendSeq.incrementAndGet();
        sendDone.put(id, then);
        try {
            qp.postInvalidate(id, mr);
        } catch (RdmaException e) {
            sendDone.remove(id);
            throw e;
        }
    }

    /**
     * always_invalidate where the provider kills a key with a call rather than a work request:
     * true when the chunk's rkey is dead on return and no completion follows; false when
     * {@link #invalidateChunk} is the way.
     */
    boolean invalidateChunkNow(MemoryRegion mr) throws RdmaException {
        return qp.invalidateNow(mr);
    }

    /** always_invalidate: a new rkey for a chunk, live for what is posted on this connection next (IB_WR_REG_MR). */
    int reregisterChunk(MemoryRegion mr) throws RdmaException {
        return qp.postReregister(sendSeq.incrementAndGet(), mr);
    }

    void post(List<SendWr> chain) throws RdmaException {
        qp.postSend(chain);
    }

    void disconnect() {
        QueuePair q = qp;
        if (q != null) {
            q.disconnect();
        }
    }

    /** Destroy the queue pair and buffers. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        QueuePair q = qp;
        if (q != null) {
            q.close();
        }
        for (Long id : List.copyOf(sendDone.keySet())) {
            Consumer<Boolean> r = sendDone.remove(id);
            if (r != null) {
                r.accept(false);
            }
        }
        recvs.close();
        dev.cons.remove(this);
    }
}

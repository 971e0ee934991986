package io.rnbd.rtrs.client.internal;

import io.rnbd.rdma.api.RecvPool;
import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmEventHandler;
import io.rnbd.rdma.api.CompletionHandler;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaException;
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
 * One connection of one path instance; events of a stale instance are ignored by the path.
 * Its CON_REQ leaves with the connect and the CON_RSP arrives with ESTABLISHED (or REJECTED),
 * as in Linux; receives are posted once the CON_RSP said how many and how large.
 */
final class ClientCon implements CompletionHandler, CmEventHandler {
    final ClientPath path;
    final int gen;
    final int cid;
    final ProtectionDomain pd;
    private final AtomicLong sendSeq = new AtomicLong();
    /** IO-path posts: all but one in {@link Rtrs#SIGNAL_INTERVAL} unsignaled. */
    private final SendSignaler signaler = new SendSignaler(Rtrs.SIGNAL_INTERVAL);
    private final Map<Long, MemoryRegion> sendBufs = new ConcurrentHashMap<>();
    volatile QueuePair qp;
    volatile RecvPool recvs;
    boolean ready;

    ClientCon(ClientPath path, int gen, int cid, ProtectionDomain pd) throws RdmaException {
        this.path = path;
        this.gen = gen;
        this.cid = cid;
        this.pd = pd;
    }

    @Override
    public void onCompletion(QueuePair q, WorkCompletion wc) {
        if (!RecvPool.isRecv(wc.wrId())) {
            MemoryRegion mr = sendBufs.remove(wc.wrId());
            if (mr != null) {
                mr.close();
            }
            if (!wc.ok()) {
                path.onConError(this, wc.status().errno(), "send " + wc.status());
            }
            return;
        }
        if (!wc.ok()) {
            if (wc.status() != WcStatus.WR_FLUSH_ERR) {
                path.onConError(this, wc.status().errno(), "receive " + wc.status());
            }
            return;
        }
        path.onRecv(this, wc);
    }

    @Override
    public void onEvent(QueuePair q, CmEvent event) {
        path.handshake.onCmEvent(this, event);
    }

    ByteBuffer received(WorkCompletion wc) {
        return recvs.data(RecvPool.slot(wc.wrId()), wc.byteLen());
    }

    void repost(WorkCompletion wc) throws RdmaException {
        recvs.post(qp, RecvPool.slot(wc.wrId()));
    }

    void send(int size, Consumer<ByteBuffer> enc) throws RdmaException {
        ByteBuffer b = ByteBuffer.allocateDirect(size);
        enc.accept(b);
        b.flip();
        MemoryRegion mr = pd.register(b, Access.of(Access.LOCAL_WRITE));
        long id = sendSeq.incrementAndGet();
        sendBufs.put(id, mr);
        try {
            qp.postSend(SendWr.send(id, List.of(Sge.whole(mr))));
        } catch (RdmaException e) {
            sendBufs.remove(id);
            mr.close();
            throw e;
        }
    }

    /** A heartbeat or its acknowledgement: an empty RDMA_WRITE_WITH_IMM, as rtrs_post_rdma_write_imm_empty. */
    void writeImmEmpty(int imm) throws RdmaException {
        qp.postSend(new SendWr(sendSeq.incrementAndGet(), WrOpcode.RDMA_WRITE_WITH_IMM, List.of(), imm, 0, 0,
                signaler.next()));
    }

    /** An IO request: the request's message written into the server's chunk, with immediate data. */
    SendWr ioWr(List<Sge> sgl, long remoteAddr, int rkey, int imm) {
        return new SendWr(sendSeq.incrementAndGet(), WrOpcode.RDMA_WRITE_WITH_IMM, sgl, imm, remoteAddr, rkey,
                signaler.next());
    }

    /**
     * IO posts, one doorbell: never under the session lock, which completions of other IO need
     * meanwhile ({@link Doorbells#ring} asserts it).
     */
    void postIo(List<SendWr> chain) throws RdmaException {
        qp.postSend(chain);
    }

    void close() {
        QueuePair q = qp;
        if (q != null) {
            q.close();
        }
        sendBufs.values().forEach(MemoryRegion::close);
        sendBufs.clear();
        RecvPool r = recvs;
        if (r != null) {
            r.close();
        }
    }

    static int errnoOf(CmEvent e) {
        return e.status() != 0 ? e.status() : switch (e.type()) {
            case UNREACHABLE -> Errno.EHOSTUNREACH;
            case REJECTED -> Errno.ECONNREFUSED;
            case DEVICE_REMOVAL -> Errno.ENODEV;
            case CONNECT_ERROR -> Errno.ETIMEDOUT;
            default -> Errno.ECONNRESET;
        };
    }
}

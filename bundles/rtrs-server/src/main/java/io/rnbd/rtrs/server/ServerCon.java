package io.rnbd.rtrs.server;

import io.rnbd.rdma.api.RecvPool;
import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmEventHandler;
import io.rnbd.rdma.api.CompletionHandler;
import io.rnbd.rdma.api.Errno;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.SendSignaler;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WcStatus;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rdma.api.WrOpcode;
import io.rnbd.rtrs.proto.ConReq;
import io.rnbd.rtrs.proto.ConRsp;
import io.rnbd.rtrs.proto.ProtoException;
import io.rnbd.rtrs.proto.Rtrs;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * One accepted connection. Until its CON_REQ arrives it belongs to no path; then the
 * path's session lock guards it.
 */
final class ServerCon implements CompletionHandler, CmEventHandler {
    private static final Logger LOG = LoggerFactory.getLogger(ServerCon.class);
    private static final int HELLO_SLOT = 64;

    final RtrsServer server;
    final DeviceContext dev;
    private final RecvPool hello;
    private final AtomicLong sendSeq = new AtomicLong();
    /** IO-path posts (responses, read data, heartbeats): unsignaled but one in {@link Rtrs#SIGNAL_INTERVAL}. */
    private final SendSignaler signaler = new SendSignaler(Rtrs.SIGNAL_INTERVAL);
    private final Map<Long, Runnable> sendDone = new ConcurrentHashMap<>();
    private volatile QueuePair qp;
    private volatile RecvPool recvs;
    volatile ServerPath path;
    volatile int cid = -1;
    private volatile boolean closed;

    ServerCon(RtrsServer server, DeviceContext dev) throws RdmaException {
        this.server = server;
        this.dev = dev;
        this.hello = new RecvPool(dev.pd, 1, HELLO_SLOT);
    }

    void accepted(QueuePair qp) throws RdmaException {
        this.qp = qp;
        hello.postAll(qp);
    }

    QueuePair qp() {
        return qp;
    }

    /** Switch from the handshake buffer to the steady-state receive buffers. */
    void useRecvs(RecvPool pool) throws RdmaException {
        this.recvs = pool;
        pool.postAll(qp);
    }

    @Override
    public void onCompletion(QueuePair q, WorkCompletion wc) {
        if (!RecvPool.isRecv(wc.wrId())) {
            Runnable r = sendDone.remove(wc.wrId());
            if (r != null) {
                r.run();
            }
            if (!wc.ok() && wc.status() != WcStatus.WR_FLUSH_ERR) {
                fail(wc.status().errno(), "send failed: " + wc.status());
            }
            return;
        }
        if (!wc.ok()) {
            fail(wc.status().errno(), "receive failed: " + wc.status());
            return;
        }
        if (cid < 0) {
            onHello(wc);
            return;
        }
        ServerPath p = path;
        if (p != null && p.onRecv(this, wc, recvs.data(RecvPool.slot(wc.wrId()), wc.byteLen()))) {
            try {
                recvs.post(qp, RecvPool.slot(wc.wrId()));
            } catch (RdmaException e) {
                fail(e.errno(), "cannot repost receive");
            }
        }
    }

    private void onHello(WorkCompletion wc) {
        try {
            if (wc.hasImm()) {
                throw new ProtoException(Errno.EPROTO, "expected CON_REQ, got an immediate");
            }
            ConReq req = ConReq.decode(hello.data(0, wc.byteLen()));
            server.onConReq(this, req);
        } catch (ProtoException e) {
            LOG.warn("refusing connection from {}: {}", qp.remoteAddress(), e.getMessage());
            refuse(e.errno(), true);
        }
    }

    /** Answer CON_RSP with an error, then drop the connection. */
    void refuse(int errno, boolean doNotRetry) {
        send(ConRsp.SIZE, ConRsp.refuse(errno, doNotRetry)::encode, this::close);
    }

    @Override
    public void onEvent(QueuePair q, CmEvent event) {
        if (event.type() == CmEvent.Type.ESTABLISHED) {
            return;
        }
        fail(event.status() == 0 ? Errno.ECONNRESET : event.status(), "connection " + event.detail());
    }

    private void fail(int errno, String why) {
        ServerPath p = path;
        if (p != null) {
            p.fail(errno, why);
        } else {
            close();
        }
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
            sendDone.put(id, () -> {
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
            fail(e.errno(), "cannot send");
        }
    }

    /** SEND_WITH_IMM, optionally carrying {@code len} bytes of {@code mr} at {@code off}. */
    void sendImm(int imm, MemoryRegion mr, int off, int len) throws RdmaException {
        List<Sge> sgl = mr == null ? List.of() : List.of(new Sge(mr, off, len));
        qp.postSend(new SendWr(sendSeq.incrementAndGet(), WrOpcode.SEND_WITH_IMM, sgl, imm, 0, 0, signaler.next()));
    }

    /** RDMA_WRITE of read data: an IO-path post like the responses (see {@link #signaler}). */
    void writeData(Sge src, long remoteAddr, int rkey) throws RdmaException {
        qp.postSend(new SendWr(sendSeq.incrementAndGet(), WrOpcode.RDMA_WRITE, List.of(src), 0, remoteAddr, rkey,
                signaler.next()));
    }

    void disconnect() {
        QueuePair q = qp;
        if (q != null) {
            q.disconnect();
        }
    }

    /** Destroy the queue pair and buffers. Idempotent. */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        QueuePair q = qp;
        if (q != null) {
            q.close();
        }
        for (Long id : List.copyOf(sendDone.keySet())) {
            Runnable r = sendDone.remove(id);
            if (r != null) {
                r.run();
            }
        }
        hello.close();
        RecvPool r = recvs;
        if (r != null) {
            r.close();
        }
        dev.cons.remove(this);
    }
}

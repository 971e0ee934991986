package io.rnbd.rtrs.client.internal;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RecvWr;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rtrs.proto.ConRsp;
import io.rnbd.rtrs.proto.InfoRsp;
import io.rnbd.rtrs.proto.MsgType;
import io.rnbd.rtrs.proto.SgDesc;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * A raw-verbs RTRS server that completes the handshake (queue depth 2, 8 KiB chunks) and
 * then never answers anything: a peer whose heartbeats stop.
 */
final class SilentServer implements AutoCloseable {
    private static final int SLOTS = 64;
    private static final int SLOT = 8192;
    private final ProtectionDomain pd;
    private final CmListener listener;
    private final MemoryRegion chunks;

    SilentServer(RdmaDevice dev) throws RdmaException {
        pd = dev.allocPd();
        chunks = pd.register(ByteBuffer.allocateDirect(2 * 8192), Access.all());
        listener = dev.listen(new InetSocketAddress(dev.addresses().get(0), 0), req -> {
            try {
                MemoryRegion rx = pd.register(ByteBuffer.allocateDirect(SLOTS * SLOT), Access.of(Access.LOCAL_WRITE));
                // a Linux-style accept: the CON_RSP in its private data, receives posted before it
                req.accept(new QpInit(pd, 64, SLOTS, 1, (q, wc) -> onWc(q, wc, rx)), (q, e) -> { },
                        ConRsp.accept(2, 4096, 4096, 0).toBytes(), qp -> {
                            for (int i = 0; i < SLOTS; i++) {
                                qp.postRecv(new RecvWr(i, List.of(new Sge(rx, i * SLOT, SLOT))));
                            }
                        });
            } catch (RdmaException e) {
                req.reject(e.errno());
            }
        });
    }

    InetSocketAddress address() {
        return listener.localAddress();
    }

    private void onWc(QueuePair qp, WorkCompletion wc, MemoryRegion rx) {
        if (!wc.ok() || wc.opcode() == io.rnbd.rdma.api.WcOpcode.SEND) {
            return;
        }
        try {
            ByteBuffer msg = rx.buffer().slice((int) wc.wrId() * SLOT, wc.byteLen());
            if (!wc.hasImm() && wc.byteLen() >= 2 && MsgType.peek(msg) == MsgType.INFO_REQ) {
                InfoRsp r = new InfoRsp(List.of(new SgDesc(chunks.address(), chunks.rkey(), 8192),
                        new SgDesc(chunks.address() + 8192, chunks.rkey(), 8192)));
                send(qp, r.size(), r::encode);
            }
            qp.postRecv(new RecvWr(wc.wrId(), List.of(new Sge(rx, (int) wc.wrId() * SLOT, SLOT))));
        } catch (Exception e) {
            qp.disconnect();
        }
    }

    private void send(QueuePair qp, int size, java.util.function.Consumer<ByteBuffer> enc) throws RdmaException {
        ByteBuffer b = ByteBuffer.allocateDirect(size);
        enc.accept(b);
        b.flip();
        MemoryRegion mr = pd.register(b, Access.of(Access.LOCAL_WRITE));
        qp.postSend(SendWr.send(1000, List.of(Sge.whole(mr))));
    }

    @Override
    public void close() {
        listener.close();
        pd.close();
    }
}

package io.rnbd.rtrs.server;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RecvWr;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WcOpcode;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rtrs.proto.ConReq;
import io.rnbd.rtrs.proto.ConRsp;
import io.rnbd.rtrs.proto.InfoReq;
import io.rnbd.rtrs.proto.InfoRsp;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/** A hand-driven RTRS client on raw verbs: it can say anything, including lies. */
final class RawClient implements AutoCloseable {
    static final int SLOT = 8192;
    static final int SLOTS = 32;

    final class Con {
        final QueuePair qp;
        final MemoryRegion rx;
        final BlockingQueue<WorkCompletion> recvs = new LinkedBlockingQueue<>();
        final BlockingQueue<WorkCompletion> sends = new LinkedBlockingQueue<>();
        final BlockingQueue<CmEvent> events = new LinkedBlockingQueue<>();

        Con(InetSocketAddress dst) throws RdmaException {
            rx = pd.register(ByteBuffer.allocateDirect(SLOTS * SLOT), Access.of(Access.LOCAL_WRITE));
            qp = dev.connect(dst, new QpInit(pd, 256, 256, 1, (q, wc) -> {
                if (wc.opcode() == WcOpcode.RECV || wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM) {
                    recvs.add(wc);
                } else {
                    sends.add(wc);
                }
            }), new byte[0], (q, e) -> events.add(e));
            for (int i = 0; i < SLOTS; i++) {
                qp.postRecv(new RecvWr(i, List.of(new Sge(rx, i * SLOT, SLOT))));
            }
        }

        CmEvent event() throws InterruptedException {
            CmEvent e = events.poll(10, TimeUnit.SECONDS);
            assertNotNull(e, "no CM event");
            return e;
        }

        WorkCompletion recv() throws Exception {
            WorkCompletion wc = recvs.poll(10, TimeUnit.SECONDS);
            assertNotNull(wc, "nothing received");
            return wc;
        }

        ByteBuffer data(WorkCompletion wc) {
            return rx.buffer().slice((int) wc.wrId() * SLOT, wc.byteLen());
        }

        void repost(WorkCompletion wc) throws RdmaException {
            qp.postRecv(new RecvWr(wc.wrId(), List.of(new Sge(rx, (int) wc.wrId() * SLOT, SLOT))));
        }

        void send(int size, Consumer<ByteBuffer> enc) throws RdmaException {
            ByteBuffer b = ByteBuffer.allocateDirect(size);
            enc.accept(b);
            b.flip();
            MemoryRegion mr = pd.register(b, Access.of(Access.LOCAL_WRITE));
            qp.postSend(SendWr.send(1, List.of(Sge.whole(mr))));
        }

        /** RDMA-write {@code bytes} into the server at (addr, rkey) with an IMM. */
        void writeImm(byte[] bytes, long addr, int rkey, int imm) throws RdmaException {
            local.buffer().put(0, bytes);
            qp.postSend(SendWr.writeWithImm(2, List.of(new Sge(local, 0, bytes.length)), addr, rkey, imm));
        }
    }

    final RdmaDevice dev;
    final ProtectionDomain pd;
    final MemoryRegion local;
    final UUID sess;
    final UUID path;
    Con[] cons;
    ConRsp conRsp;
    InfoRsp info;

    int reconCnt = 1;

    RawClient(RdmaDevice dev) throws RdmaException {
        this(dev, UUID.randomUUID(), UUID.randomUUID());
    }

    /** A client claiming to be {@code sess}/{@code path}, e.g. an existing path reconnecting. */
    RawClient(RdmaDevice dev, UUID sess, UUID path) throws RdmaException {
        this.sess = sess;
        this.path = path;
        this.dev = dev;
        this.pd = dev.allocPd();
        this.local = pd.register(ByteBuffer.allocateDirect(64 * 1024), Access.all());
    }

    /** Only the first connection's CON_REQ; returns the server's CON_RSP. */
    ConRsp hello(InetSocketAddress dst, int n) throws Exception {
        Con c = new Con(dst);
        cons = new Con[] {c};
        assertEquals(CmEvent.Type.ESTABLISHED, c.event().type());
        c.send(ConReq.SIZE, new ConReq(0, n, reconCnt, sess, path, true)::encode);
        WorkCompletion wc = c.recv();
        return ConRsp.decode(c.data(wc));
    }

    /** Full handshake with {@code n} connections, as a well-behaved client would. */
    RawClient connect(InetSocketAddress dst, int n, String name) throws Exception {
        cons = new Con[n];
        for (int cid = 0; cid < n; cid++) {
            Con c = new Con(dst);
            cons[cid] = c;
            assertEquals(CmEvent.Type.ESTABLISHED, c.event().type());
            c.send(ConReq.SIZE, new ConReq(cid, n, reconCnt, sess, path, cid == 0)::encode);
            WorkCompletion wc = c.recv();
            conRsp = ConRsp.decode(c.data(wc));
            assertEquals(0, conRsp.errno());
            c.repost(wc);
        }
        cons[0].send(InfoReq.SIZE, new InfoReq(name)::encode);
        WorkCompletion wc = cons[0].recv();
        info = InfoRsp.decode(cons[0].data(wc));
        cons[0].repost(wc);
        return this;
    }

    @Override
    public void close() {
        if (cons != null) {
            for (Con c : cons) {
                if (c != null) {
                    c.qp.close();
                }
            }
        }
        pd.close();
    }
}

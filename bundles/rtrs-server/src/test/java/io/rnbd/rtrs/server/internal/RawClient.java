package io.rnbd.rtrs.server.internal;

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
import io.rnbd.rtrs.api.AuthExchange;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.proto.AuthMsg;
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

/**
 * A hand-driven RTRS client on raw verbs that by default does what Linux's rtrs-clt.c does
 * on the wire (CON_REQ in the connect's private data, CON_RSP from ESTABLISHED, INFO_REQ as
 * a SEND on connection 0, no extensions) and can also say anything, including lies.
 */
final class RawClient implements AutoCloseable {
    static final int SLOT = 8192;
    static final int SLOTS = 32;

    final class Con {
        final QueuePair qp;
        final MemoryRegion rx;
        final BlockingQueue<WorkCompletion> recvs = new LinkedBlockingQueue<>();
        final BlockingQueue<WorkCompletion> sends = new LinkedBlockingQueue<>();
        final BlockingQueue<CmEvent> events = new LinkedBlockingQueue<>();

        Con(InetSocketAddress dst, byte[] privateData) throws RdmaException {
            rx = pd.register(ByteBuffer.allocateDirect(SLOTS * SLOT), Access.of(Access.LOCAL_WRITE));
            qp = dev.connect(dst, new QpInit(pd, 256, 256, 1, (q, wc) -> {
                if (wc.opcode() == WcOpcode.RECV || wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM) {
                    recvs.add(wc);
                } else {
                    sends.add(wc);
                }
            }), privateData, (q, e) -> events.add(e));
            try {
                for (int i = 0; i < SLOTS; i++) {
                    qp.postRecv(new RecvWr(i, List.of(new Sge(rx, i * SLOT, SLOT))));
                }
            } catch (RdmaException refusedAlready) {
                // the server may reject before we get here: the event says so
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

        /** An empty RDMA_WRITE_WITH_IMM, as Linux's heartbeats. */
        void writeImmEmpty(int imm) throws RdmaException {
            qp.postSend(SendWr.writeWithImm(3, List.of(), 0, 0, imm));
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
    /** Whether the CON_REQ says the client speaks the appliance's extensions (Linux's never does). */
    boolean extensions;

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

    RawClient withExtensions() {
        extensions = true;
        return this;
    }

    byte[] conReq(int cid, int n, boolean firstConn) {
        return new ConReq(cid, n, reconCnt, path, sess, firstConn, extensions).toBytes();
    }

    /** The server's answer to a connect: the accept's CON_RSP, or the reject's. */
    static ConRsp answer(CmEvent e) throws Exception {
        if (e.type() != CmEvent.Type.ESTABLISHED && e.type() != CmEvent.Type.REJECTED) {
            throw new AssertionError("expected ESTABLISHED or REJECTED, got " + e);
        }
        return ConRsp.decode(e.privateData());
    }

    /** Only the first connection; returns the server's CON_RSP (accept or reject). */
    ConRsp hello(InetSocketAddress dst, int n) throws Exception {
        Con c = new Con(dst, conReq(0, n, true));
        cons = new Con[] {c};
        return answer(c.event());
    }

    /** Full handshake with {@code n} connections, as Linux's client does it (rtrs_clt_open, init_path). */
    RawClient connect(InetSocketAddress dst, int n, String name) throws Exception {
        return open(dst, n).info(name);
    }

    /** Every connection of the path, each accepted; no INFO_REQ yet. */
    RawClient open(InetSocketAddress dst, int n) throws Exception {
        cons = new Con[n];
        for (int cid = 0; cid < n; cid++) {
            Con c = new Con(dst, conReq(cid, n, true));
            cons[cid] = c;
            CmEvent e = c.event();
            assertEquals(CmEvent.Type.ESTABLISHED, e.type(), "connection " + cid + ": " + e);
            conRsp = answer(e);
            assertEquals(0, conRsp.errno());
        }
        return this;
    }

    /** INFO_REQ naming the session; the INFO_RSP is kept in {@link #info}. */
    RawClient info(String name) throws Exception {
        cons[0].send(InfoReq.SIZE, new InfoReq(name)::encode);
        WorkCompletion wc = cons[0].recv();
        info = InfoRsp.decode(cons[0].data(wc));
        cons[0].repost(wc);
        return this;
    }

    /**
     * The AUTH exchange as the appliance's client drives it on connection 0 (the client's
     * PathHandshake.startAuth/onAuth), with {@code a} initiating as {@code hostId}.
     *
     * @return 0 once the server's final AUTH arrived, else the errno the server refused with
     */
    int authenticate(Authenticator a, String hostId) throws Exception {
        AuthExchange x = a.initiate(hostId);
        byte[] out = x.step(new byte[0]);
        try {
            return exchange(a, x, out);
        } catch (io.rnbd.rtrs.api.AuthException e) {
            // the target's FAILURE1 arrives as a step; our side throws its errno
            return e.errno();
        }
    }

    private int exchange(Authenticator a, AuthExchange x, byte[] out) throws Exception {
        while (true) {
            AuthMsg m = AuthMsg.step(a.method(), out, false);
            cons[0].send(m.size(), m::encode);
            WorkCompletion wc = cons[0].recv();
            AuthMsg in = AuthMsg.decode(cons[0].data(wc));
            cons[0].repost(wc);
            if (in.status() != 0) {
                return in.status();
            }
            if (in.has(AuthMsg.FINAL_F)) {
                if (in.data().length > 0) {
                    x.step(in.data());
                }
                return 0;
            }
            out = x.step(in.data());
        }
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

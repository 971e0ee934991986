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
import io.rnbd.rdma.api.WcOpcode;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rdma.api.WrOpcode;
import io.rnbd.rtrs.proto.ConReq;
import io.rnbd.rtrs.proto.ConRsp;
import io.rnbd.rtrs.proto.Imm;
import io.rnbd.rtrs.proto.InfoReq;
import io.rnbd.rtrs.proto.InfoRsp;
import io.rnbd.rtrs.proto.MsgType;
import io.rnbd.rtrs.proto.RdmaReadMsg;
import io.rnbd.rtrs.proto.RdmaWriteMsg;
import io.rnbd.rtrs.proto.RkeyRsp;
import io.rnbd.rtrs.proto.SgDesc;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A raw-verbs RTRS server that does on the wire what Linux's rtrs-srv.c does and nothing
 * more (no extensions): CON_RSP in the accept; INFO_RSP with one descriptor per chunk under
 * always_invalidate, else one descriptor for all chunks (one region, as Linux registers
 * as many chunks per region as the adapter allows); answers as empty RDMA_WRITE_WITH_IMM,
 * or SEND_WITH_IMM with an RKEY_RSP under IO_RSP; read data RDMA-written first. Storage
 * is {@link MemoryOps}'s, whose user header is {u64 offset}. As in rtrs-srv.c
 * (map_cont_bufs), every path registers the session's chunks itself: its own regions and
 * keys, so a chunk re-keyed on one path (always_invalidate) keeps its key on the others.
 */
final class LinuxStyleServer implements AutoCloseable {
    static final int QD = 8;
    /**
     * The queue depth new connections are told (at most {@link #QD}): a test lowers it to play
     * a server restarted with another sess_queue_depth.
     */
    volatile int qd = QD;
    static final int CHUNK = 16384;
    private static final int RECVS = 64;
    private static final int SLOT = 512;

    final MemoryOps ops = new MemoryOps(1 << 20);
    final List<ConReq> conReqs = new CopyOnWriteArrayList<>();
    /** The connect requests and accepts, in order: "req PATH/CID", "accept PATH/CID". */
    final List<String> cmLog = new CopyOnWriteArrayList<>();
    /** Set to leave connection 0's connect request unanswered until {@link #releaseParked}. */
    volatile boolean parkFirstCon;
    private final java.util.Queue<Runnable> parked = new java.util.concurrent.ConcurrentLinkedQueue<>();
    /** Set to make every connect be rejected with this errno, as rtrs_rdma_do_reject does. */
    volatile int rejectWith;
    private final boolean alwaysInvalidate;
    private final ProtectionDomain pd;
    private final CmListener listener;
    private final ByteBuffer chunks = ByteBuffer.allocateDirect(QD * CHUNK).order(ByteOrder.LITTLE_ENDIAN);
    /** Each path's registration of the chunks (rtrs_srv_path's mrs). */
    private final java.util.Map<java.util.UUID, MemoryRegion[]> mrsByPath = new java.util.concurrent.ConcurrentHashMap<>();
    private final MemoryRegion rkeyBuf;
    /** What {@link #probeWrite} sends from: the chunks, as a hostile server would. */
    private final MemoryRegion probeSource;
    private final List<QueuePair> qps = new CopyOnWriteArrayList<>();
    private final java.util.Map<java.util.UUID, List<QueuePair>> byPath = new java.util.concurrent.ConcurrentHashMap<>();
    /** SENDs other than INFO_REQ: Linux's server would close the path on them (FENCE, AUTH). */
    final java.util.concurrent.atomic.AtomicInteger foreignSends = new java.util.concurrent.atomic.AtomicInteger();
    /** Every read descriptor a client sent, with the queue pair it came on, in arrival order. */
    final List<ReadSeen> reads = new CopyOnWriteArrayList<>();
    /** Set to leave reads unanswered (and their data unwritten): they stay in flight. */
    volatile boolean holdReads;
    private final java.util.concurrent.atomic.AtomicLong probeIds = new java.util.concurrent.atomic.AtomicLong(1L << 40);
    private final java.util.Map<Long, java.util.concurrent.CompletableFuture<io.rnbd.rdma.api.WcStatus>> probes =
            new java.util.concurrent.ConcurrentHashMap<>();

    /** A read request as the server saw it: where the client said to write its data. */
    record ReadSeen(QueuePair qp, SgDesc desc) {
    }

    LinuxStyleServer(RdmaDevice dev, boolean alwaysInvalidate) throws RdmaException {
        this.alwaysInvalidate = alwaysInvalidate;
        pd = dev.allocPd();
        probeSource = pd.register(chunks.duplicate(), Access.of(Access.LOCAL_WRITE));
        rkeyBuf = pd.register(ByteBuffer.allocateDirect(QD * RkeyRsp.SIZE), Access.of(Access.LOCAL_WRITE));
        listener = dev.listen(new InetSocketAddress(dev.addresses().get(0), 0), req -> {
            try {
                ConReq cr = ConReq.decode(req.privateData());
                conReqs.add(cr);
                cmLog.add("req " + cr.pathUuid() + "/" + cr.cid());
                if (rejectWith != 0) {
                    req.reject(rejectWith, ConRsp.refuse(rejectWith, false).toBytes());
                    return;
                }
                if (parkFirstCon && cr.cid() == 0) {
                    parked.add(() -> answer(req, cr));
                    return;
                }
                answer(req, cr);
            } catch (Exception e) {
                req.reject(io.rnbd.common.Errno.ECONNRESET, ConRsp.refuse(io.rnbd.common.Errno.ECONNRESET, false)
                        .toBytes());
            }
        });
    }

    /**
     * Connect requests parked now. Wait on this, not on {@link #conReqs}: a request is logged there
     * before the handler parks it, and a release between the two would find nothing to release.
     */
    int parkedCount() {
        return parked.size();
    }

    /** Accepts connection 0 of each path parked by {@link #parkFirstCon}, as the server would have at once. */
    void releaseParked() {
        Runnable r;
        while ((r = parked.poll()) != null) {
            r.run();
        }
    }

    private void answer(io.rnbd.rdma.api.ConnectRequest req, ConReq cr) {
        try {
            MemoryRegion[] mrs = mrsByPath.computeIfAbsent(cr.pathUuid(), u -> registerChunks());
            MemoryRegion rx = pd.register(ByteBuffer.allocateDirect(RECVS * SLOT), Access.of(Access.LOCAL_WRITE));
            ConRsp rsp = ConRsp.accept(qd, CHUNK - 4096, 4096, alwaysInvalidate ? ConRsp.NEW_RKEY_F : 0);
            // logged before the answer leaves: whatever the client does on it comes after
            cmLog.add("accept " + cr.pathUuid() + "/" + cr.cid());
            QueuePair qp = req.accept(new QpInit(pd, 256, RECVS, 1, (q, wc) -> onWc(q, wc, rx, mrs, cr.pathUuid())),
                    (q, e) -> { },
                    rsp.toBytes(), q -> {
                        for (int i = 0; i < RECVS; i++) {
                            q.postRecv(new RecvWr(i, List.of(new Sge(rx, i * SLOT, SLOT))));
                        }
                    });
            qps.add(qp);
            byPath.computeIfAbsent(cr.pathUuid(), u -> new CopyOnWriteArrayList<>()).add(qp);
        } catch (Exception e) {
            req.reject(io.rnbd.common.Errno.ECONNRESET, ConRsp.refuse(io.rnbd.common.Errno.ECONNRESET, false)
                    .toBytes());
        }
    }

    private MemoryRegion[] registerChunks() {
        MemoryRegion[] mrs = new MemoryRegion[alwaysInvalidate ? QD : 1];
        for (int i = 0; i < mrs.length; i++) {
            int len = alwaysInvalidate ? CHUNK : QD * CHUNK;
            try {
                mrs[i] = pd.register(chunks.duplicate().position(i * CHUNK).limit(i * CHUNK + len).slice(),
                        Access.all());
            } catch (RdmaException e) {
                throw new IllegalStateException(e);
            }
        }
        return mrs;
    }

    InetSocketAddress address() {
        return listener.localAddress();
    }

    PathAddress path() {
        return new PathAddress(address().getAddress(), address().getAddress(), address().getPort());
    }

    /** Drop the connections of one path, as close_path does. */
    void disconnectPath(java.util.UUID path) {
        byPath.getOrDefault(path, List.of()).forEach(QueuePair::disconnect);
    }

    /** Drop every connection, as a server crash or close_path would. */
    void disconnectAll() {
        qps.forEach(QueuePair::disconnect);
    }

    /**
     * What a hostile server could do with a client's read descriptors: RDMA WRITE {@code len}
     * bytes to {@code (addr, rkey)} of the client over {@code qp}; completes with the status
     * (anything but SUCCESS also kills {@code qp}, as on an adapter).
     */
    java.util.concurrent.CompletableFuture<io.rnbd.rdma.api.WcStatus> probeWrite(QueuePair qp, long addr, int rkey,
                                                                              int len) throws RdmaException {
        long id = probeIds.incrementAndGet();
        java.util.concurrent.CompletableFuture<io.rnbd.rdma.api.WcStatus> f = new java.util.concurrent.CompletableFuture<>();
        probes.put(id, f);
        qp.postSend(SendWr.write(id, List.of(new Sge(probeSource, 0, len)), addr, rkey));
        return f;
    }

    /** The queue pairs of every path's connections, in accept order. */
    List<QueuePair> queuePairs() {
        return List.copyOf(qps);
    }

    private void onWc(QueuePair qp, WorkCompletion wc, MemoryRegion rx, MemoryRegion[] mrs, java.util.UUID path) {
        java.util.concurrent.CompletableFuture<io.rnbd.rdma.api.WcStatus> probe = probes.remove(wc.wrId());
        if (probe != null) {
            probe.complete(wc.status());
            return;
        }
        if (!wc.ok() || (wc.opcode() != WcOpcode.RECV && wc.opcode() != WcOpcode.RECV_RDMA_WITH_IMM)) {
            return;
        }
        try {
            if (wc.opcode() == WcOpcode.RECV) {
                ByteBuffer msg = rx.buffer().slice((int) wc.wrId() * SLOT, wc.byteLen());
                if (MsgType.peek(msg) != MsgType.INFO_REQ) {
                    foreignSends.incrementAndGet();
                    qp.disconnect(); // Linux's server knows no other SEND
                    return;
                }
                InfoReq.decode(msg);
                List<SgDesc> d = new ArrayList<>();
                int n = alwaysInvalidate ? qd : 1;
                for (int i = 0; i < n; i++) {
                    MemoryRegion mr = mrs[i];
                    d.add(new SgDesc(mr.address(), mr.rkey(), alwaysInvalidate ? mr.length() : qd * CHUNK));
                }
                InfoRsp r = new InfoRsp(d);
                send(qp, r.size(), r::encode);
            } else if (Imm.type(wc.imm()) == Imm.HB_MSG) {
                qp.postSend(new SendWr(3, WrOpcode.RDMA_WRITE_WITH_IMM, List.of(), Imm.hbAck(), 0, 0, false));
            } else if (Imm.type(wc.imm()) == Imm.IO_REQ) {
                ioReq(qp, wc.imm(), mrs, path);
            }
            qp.postRecv(new RecvWr(wc.wrId(), List.of(new Sge(rx, (int) wc.wrId() * SLOT, SLOT))));
        } catch (Exception e) {
            qp.disconnect();
        }
    }

    private void ioReq(QueuePair qp, int imm, MemoryRegion[] mrs, java.util.UUID path) throws Exception {
        int id = Imm.reqBufId(imm, Imm.offsetBits(qd));
        int off = Imm.reqOffset(imm, Imm.offsetBits(qd));
        ByteBuffer chunk = chunks.duplicate().position(id * CHUNK).limit(id * CHUNK + CHUNK).slice()
                .order(ByteOrder.LITTLE_ENDIAN);
        if (alwaysInvalidate) {
            mrs[id].invalidate();
        }
        ByteBuffer at = chunk.duplicate().position(off);
        if (MsgType.peek(at) == MsgType.RDMA_WRITE) {
            int usrLen = RdmaWriteMsg.decode(at).usrLen();
            ops.onRequest(new Request(path, true, chunk.slice(off - usrLen, usrLen), chunk.slice(0, off - usrLen),
                    errno -> respond(qp, id, mrs, errno, null)));
            return;
        }
        RdmaReadMsg m = RdmaReadMsg.decode(at);
        for (SgDesc d : m.descs()) {
            reads.add(new ReadSeen(qp, d));
        }
        if (holdReads) {
            if (alwaysInvalidate) {
                // unanswered, so no RKEY_RSP: a reconnect's INFO_RSP carries the chunk's new key
                mrs[id].reregister();
            }
            return;
        }
        int dataLen = off - m.usrLen();
        SgDesc to = m.descs().isEmpty() ? null : m.descs().get(0);
        ops.onRequest(new Request(path, false, chunk.slice(dataLen, m.usrLen()), chunk.slice(0, dataLen),
                errno -> respond(qp, id, mrs, errno, errno == 0 ? to : null)));
    }

    /**
     * Answers a request when its upper layer completes it, which may be later and on another
     * thread (a held request): read data first when {@code readTo} is given, then IO_RSP.
     */
    private void respond(QueuePair qp, int id, MemoryRegion[] mrs, int errno, SgDesc readTo) {
        List<SendWr> chain = new ArrayList<>();
        if (readTo != null) {
            int base = alwaysInvalidate ? 0 : id * CHUNK;
            chain.add(new SendWr(4, WrOpcode.RDMA_WRITE, List.of(new Sge(mrs[alwaysInvalidate ? id : 0], base,
                    readTo.len())), 0, readTo.addr(), readTo.key(), false));
        }
        int rsp = Imm.ioRsp(id, errno, false);
        try {
            if (alwaysInvalidate) {
                int rkey = mrs[id].reregister();
                new RkeyRsp(id, rkey).encode(rkeyBuf.buffer().duplicate().position(id * RkeyRsp.SIZE));
                chain.add(new SendWr(5, WrOpcode.SEND_WITH_IMM, List.of(new Sge(rkeyBuf, id * RkeyRsp.SIZE,
                        RkeyRsp.SIZE)), rsp, 0, 0, false));
            } else {
                chain.add(new SendWr(5, WrOpcode.RDMA_WRITE_WITH_IMM, List.of(), rsp, 0, 0, false));
            }
            qp.postSend(chain);
        } catch (RdmaException e) {
            qp.disconnect(); // the path is going or gone: its client resends elsewhere
        }
    }

    /** A request as MemoryOps sees it, with the path it came on (a held one may be lost with it). */
    record Request(java.util.UUID path, boolean isWrite, ByteBuffer usr, ByteBuffer data,
                   java.util.function.IntConsumer onComplete) implements io.rnbd.rtrs.api.RtrsServerRequest {
        @Override
        public io.rnbd.rtrs.api.RtrsServerSession session() {
            return null;
        }

        @Override
        public ByteBuffer userHeader() {
            return usr.duplicate();
        }

        @Override
        public ByteBuffer data() {
            return data.duplicate();
        }

        @Override
        public void complete(int errno) {
            onComplete.accept(errno);
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
        qps.forEach(QueuePair::close);
        pd.close();
    }
}

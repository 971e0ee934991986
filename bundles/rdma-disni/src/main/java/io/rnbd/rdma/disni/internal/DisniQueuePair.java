package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmEventHandler;
import io.rnbd.rdma.api.CompletionHandler;
import io.rnbd.common.Errno;
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
import java.util.LinkedList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A reliable-connected QP on its own CM id and CQ.
 *
 * <p>Completions: the CQ is polled only by the device's completion thread. DiSNI decodes
 * nothing but wr_id and status of a failed completion, so the provider keeps its own
 * record of every posted request (send and receive queue, posting order) and names
 * requests by a token: bit 63 tells a receive from a send, the rest counts. A send
 * completion also retires the unsignaled sends posted before it (RC completes in order).
 */
final class DisniQueuePair implements QueuePair, CmTarget {
    private static final Logger LOG = LoggerFactory.getLogger(DisniQueuePair.class);
    private static final long RECV_BIT = 1L << 63;
    private static final int IBV_WC_WITH_IMM = 1 << 1;
    private static final int IBV_WC_WITH_INV = 1 << 3;
    /** enum ibv_wr_opcode's IBV_WR_SEND_WITH_INV (DiSNI has no constant for it). */
    private static final int IBV_WR_SEND_WITH_INV = 9;
    /** Transport retries on a lost packet (the most the IB CM allows, as Linux's RTRS asks). */
    static final int RETRY_COUNT = 7;
    /** RNR retries: 7 means "forever", so a SEND that finds no RECV waits for one (as Linux's RTRS asks). */
    static final int RNR_RETRY_INFINITE = 7;
    /** enum ib_cm_rej_reason: the CM has no listener for the service (nobody listens on that port). */
    private static final int IB_CM_REJ_INVALID_SERVICE_ID = 8;
    /** enum ib_cm_rej_reason: rdma_reject by the acceptor (or a destroyed request id). */
    private static final int IB_CM_REJ_CONSUMER_DEFINED = 28;
    private static final int IBV_WC_RECV_RDMA_WITH_IMM = 129;
    private static final int POLL_BATCH = 32;
    // enum ibv_wc_status
    private static final int IBV_WC_SUCCESS = 0;
    private static final int IBV_WC_LOC_LEN_ERR = 1;
    private static final int IBV_WC_LOC_QP_OP_ERR = 2;
    private static final int IBV_WC_LOC_PROT_ERR = 4;
    private static final int IBV_WC_WR_FLUSH_ERR = 5;
    private static final int IBV_WC_REM_INV_REQ_ERR = 9;
    private static final int IBV_WC_REM_ACCESS_ERR = 10;
    private static final int IBV_WC_REM_OP_ERR = 11;
    private static final int IBV_WC_RETRY_EXC_ERR = 12;
    private static final int IBV_WC_RNR_RETRY_EXC_ERR = 13;

    /** @param foreignSge an SGE named a region that is closed, invalidated or not of this PD */
    private record Posted(long token, long wrId, WcOpcode opcode, boolean signaled, boolean foreignSge) {
        WorkCompletion flushed() {
            return new WorkCompletion(wrId, WcStatus.WR_FLUSH_ERR, opcode, 0, false, 0);
        }
    }

    /** A send posted before the connection is up: handed to the adapter on ESTABLISHED. */
    private record Held(IbvSendWR wr, Posted posted) {
    }

    private final DisniDevice device;
    private final DisniProtectionDomain pd;
    private final RdmaCmId id;
    private final QpInit init;
    private final CmEventHandler events;
    private final CompletionHandler completions;
    private final IbvCQ cq;
    private final IbvQP qp;
    /** The initiator's connect private data; null on the passive side. */
    private final byte[] connectData;
    private final IbvWC[] wcs = new IbvWC[POLL_BATCH];
    private final SVCPollCq poll;
    private final Object postLock = new Object();
    private final Object cqLock = new Object();
    private final ArrayDeque<Posted> sendQueue = new ArrayDeque<>();
    private final ArrayDeque<Posted> recvQueue = new ArrayDeque<>();
    private final List<Held> held = new ArrayList<>();
    private boolean tornDown;
    private long nextToken;
    private volatile QpState state = QpState.INIT;
    private volatile InetSocketAddress local;
    private volatile InetSocketAddress remote;
    private boolean disconnectSent;
    private boolean cqClosed;

    private DisniQueuePair(DisniDevice device, DisniProtectionDomain pd, RdmaCmId id, QpInit init,
                           CmEventHandler events, IbvCQ cq, IbvQP qp, InetSocketAddress remote, byte[] connectData)
            throws IOException {
        this.device = device;
        this.pd = pd;
        this.id = id;
        this.init = init;
        this.events = events;
        this.completions = init.completions();
        this.cq = cq;
        this.qp = qp;
        this.connectData = connectData;
        this.remote = remote;
        this.local = (InetSocketAddress) id.getSource();
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new IbvWC();
        }
        this.poll = cq.poll(wcs, wcs.length);
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
        try {
            cq = device.context().createCQ(device.compChannel(), init.maxSendWr() + init.maxRecvWr(), 0);
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
            return new DisniQueuePair(device, pd, id, init, events, cq, qp, remote, connectData);
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

    /** The ibv_qp behind this QP (for the tests' memory windows). */
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
        LinkedList<IbvSge> sgl = new LinkedList<>();
        boolean foreign = sges(wr.sgl(), sgl);
        IbvSendWR w = new IbvSendWR();
        w.setOpcode(opcode(wr.opcode()));
        w.setSend_flags(wr.signaled() ? IbvSendWR.IBV_SEND_SIGNALED : 0);
        w.setImm_data(wr.imm());
        w.setSg_list(sgl);
        if (wr.opcode().isRdma()) {
            w.getRdma().setRemote_addr(wr.remoteAddr());
            w.getRdma().setRkey(wr.rkey());
        }
        synchronized (postLock) {
            if (state != QpState.RTS && state != QpState.INIT) {
                throw new RdmaException(Errno.ENOTCONN, "queue pair is " + state);
            }
            if (sendQueue.size() + held.size() >= init.maxSendWr()) {
                throw new RdmaException(Errno.ENOMEM, "send queue full (" + init.maxSendWr() + ")");
            }
            long token = nextToken++ & ~RECV_BIT;
            w.setWr_id(token);
            Posted p = new Posted(token, wr.wrId(), wcOpcode(wr.opcode()), wr.signaled(), foreign);
            if (state == QpState.INIT) {
                // the QP cannot send before RTS; RC semantics still promise delivery
                held.add(new Held(w, p));
                return;
            }
            sendQueue.addLast(p);
            try {
                post(w);
            } catch (IOException e) {
                sendQueue.removeLast();
                throw Errors.of("ibv_post_send", e);
            }
        }
    }

    private void post(IbvSendWR w) throws IOException {
        SVCPostSend call = qp.postSend(List.of(w), null);
        try {
            call.execute();
        } finally {
            call.free();
        }
    }

    /**
     * ESTABLISHED: RTS, and the held sends go to the adapter in posting order. The
     * initiator's event carries the acceptor's private data (IB: the REP's whole 196 bytes).
     */
    private void established(byte[] acceptData) {
        boolean failed = false;
        synchronized (postLock) {
            if (state != QpState.INIT) {
                return;
            }
            state = QpState.RTS;
            for (Held h : held) {
                sendQueue.addLast(h.posted());
                try {
                    post(h.wr());
                } catch (IOException e) {
                    LOG.warn("rdma-disni: posting a held send on {} failed", this, e);
                    failed = true;
                    break;
                }
            }
            held.clear();
        }
        emit(new CmEvent(CmEvent.Type.ESTABLISHED, 0, "established", connectData == null ? null : acceptData));
        if (failed) {
            failed();
        }
    }

    @Override
    public void postRecv(RecvWr wr) throws RdmaException {
        LinkedList<IbvSge> sgl = new LinkedList<>();
        boolean foreign = sges(wr.sgl(), sgl);
        IbvRecvWR w = new IbvRecvWR();
        w.setSg_list(sgl);
        synchronized (postLock) {
            if (state == QpState.ERROR || state == QpState.CLOSED) {
                throw new RdmaException(Errno.ENOTCONN, "queue pair is " + state);
            }
            if (recvQueue.size() >= init.maxRecvWr()) {
                throw new RdmaException(Errno.ENOMEM, "receive queue full (" + init.maxRecvWr() + ")");
            }
            long token = nextToken++ | RECV_BIT;
            w.setWr_id(token);
            recvQueue.addLast(new Posted(token, wr.wrId(), WcOpcode.RECV, true, foreign));
            try {
                SVCPostRecv call = qp.postRecv(List.of(w), null);
                try {
                    call.execute();
                } finally {
                    call.free();
                }
            } catch (IOException e) {
                recvQueue.removeLast();
                throw Errors.of("ibv_post_recv", e);
            }
        }
    }

    /**
     * Fills {@code out}; returns whether an SGE names a region the adapter will refuse
     * (closed, or of another protection domain; an invalidated rkey does not matter
     * locally). Such a request is still
     * posted, so it fails in order with the requests around it; the adapter's status for
     * it (rxe says LOC_QP_OP_ERR, mlx5 LOC_PROT_ERR) is then reported as LOC_PROT_ERR.
     */
    private boolean sges(List<Sge> list, LinkedList<IbvSge> out) throws RdmaException {
        if (list.size() > init.maxSge()) {
            throw new RdmaException(Errno.EINVAL, list.size() + " SGEs, queue pair takes " + init.maxSge());
        }
        boolean foreign = false;
        for (Sge s : list) {
            if (!(s.mr() instanceof DisniMemoryRegion mr)) {
                throw new RdmaException(Errno.EINVAL, "SGE names a memory region of another provider");
            }
            boolean ours = mr.pd() == pd && mr.usableLocally();
            foreign |= !ours;
            IbvSge g = new IbvSge();
            g.setAddr(mr.address() + s.offset());
            g.setLength(s.length());
            // another device's lkey could be valid here by chance: never hand it over
            g.setLkey(ours || mr.pd().device() == device ? mr.lkey() : 0);
            out.add(g);
        }
        return foreign;
    }

    private static int opcode(WrOpcode op) {
        switch (op) {
            case SEND: return IbvSendWR.IBV_WR_SEND;
            case SEND_WITH_IMM: return IbvSendWR.IBV_WR_SEND_WITH_IMM;
            case RDMA_WRITE: return IbvSendWR.IBV_WR_RDMA_WRITE;
            case RDMA_WRITE_WITH_IMM: return IbvSendWR.IBV_WR_RDMA_WRITE_WITH_IMM;
            // the rkey travels in the imm field: libdisni puts it in invalidate_rkey
            case SEND_WITH_INV: return IBV_WR_SEND_WITH_INV;
            case RDMA_READ: return IbvSendWR.IBV_WR_RDMA_READ;
            default: throw new IllegalArgumentException("opcode " + op);
        }
    }

    private static WcOpcode wcOpcode(WrOpcode op) {
        switch (op) {
            case SEND:
            case SEND_WITH_IMM:
            case SEND_WITH_INV: return WcOpcode.SEND;
            case RDMA_WRITE:
            case RDMA_WRITE_WITH_IMM: return WcOpcode.RDMA_WRITE;
            default: return WcOpcode.RDMA_READ;
        }
    }

    /** On the completion thread: re-arm, drain the CQ, deliver. */
    void pollAndDeliver() {
        List<WorkCompletion> out = new ArrayList<>();
        synchronized (cqLock) {
            if (cqClosed) {
                return;
            }
            try {
                cq.reqNotification(false).execute().free();
                int n;
                do {
                    n = poll.execute().getPolls();
                    for (int i = 0; i < n; i++) {
                        WorkCompletion wc = translate(wcs[i]);
                        if (wc != null) {
                            out.add(wc);
                        }
                    }
                } while (n == wcs.length);
            } catch (IOException e) {
                LOG.warn("rdma-disni: polling the CQ of {} failed", this, e);
            }
        }
        for (WorkCompletion wc : out) {
            if (!wc.ok()) {
                failed();
            }
            deliver(wc);
        }
    }

    private WorkCompletion translate(IbvWC wc) {
        long token = wc.getWr_id();
        Posted p;
        synchronized (postLock) {
            p = (token & RECV_BIT) != 0 ? retire(recvQueue, token) : retire(sendQueue, token);
        }
        if (p == null) {
            return null; // already flushed by close()
        }
        WcStatus status = status(wc.getStatus(), p);
        boolean ok = status == WcStatus.SUCCESS;
        WcOpcode op = p.opcode();
        boolean hasImm = false;
        int imm = 0;
        int len = 0;
        Integer invalidated = null;
        if (ok) {
            len = wc.getByte_len();
            if (p.opcode() == WcOpcode.RECV) {
                op = wc.getOpcode() == IBV_WC_RECV_RDMA_WITH_IMM ? WcOpcode.RECV_RDMA_WITH_IMM : WcOpcode.RECV;
                hasImm = (wc.getWc_flags() & IBV_WC_WITH_IMM) != 0;
                imm = hasImm ? wc.getImm_data() : 0;
                // ibv_wc keeps invalidated_rkey in imm_data's place; libdisni wrote it there in host order
                if ((wc.getWc_flags() & IBV_WC_WITH_INV) != 0) {
                    invalidated = wc.getImm_data();
                }
            }
        }
        return new WorkCompletion(p.wrId(), status, op, len, hasImm, imm, invalidated);
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

    private WcStatus status(int s, Posted p) {
        switch (s) {
            case IBV_WC_SUCCESS: return WcStatus.SUCCESS;
            case IBV_WC_LOC_LEN_ERR: return WcStatus.LOC_LEN_ERR;
            case IBV_WC_LOC_PROT_ERR: return WcStatus.LOC_PROT_ERR;
            case IBV_WC_WR_FLUSH_ERR: return WcStatus.WR_FLUSH_ERR;
            case IBV_WC_REM_ACCESS_ERR: return WcStatus.REM_ACCESS_ERR;
            case IBV_WC_REM_OP_ERR: return WcStatus.REM_OP_ERR;
            case IBV_WC_RETRY_EXC_ERR: return WcStatus.RETRY_EXC_ERR;
            case IBV_WC_RNR_RETRY_EXC_ERR: return WcStatus.RNR_RETRY_EXC_ERR;
            default:
                break;
        }
        if (p.foreignSge()) {
            return WcStatus.LOC_PROT_ERR;
        }
        if ((s == IBV_WC_LOC_QP_OP_ERR || s == IBV_WC_REM_INV_REQ_ERR) && p.opcode() == WcOpcode.RECV) {
            // rxe (6.1) completes a RECV that an incoming message overflows with
            // LOC_QP_OP_ERR (older kernels: REM_INV_REQ_ERR) where adapters say LOC_LEN_ERR
            return WcStatus.LOC_LEN_ERR;
        }
        LOG.info("rdma-disni: {} completion status {} (ibv_wc_status) reported as GENERAL_ERR", this, s);
        return WcStatus.GENERAL_ERR;
    }

    private void deliver(WorkCompletion wc) {
        try {
            completions.onCompletion(this, wc);
        } catch (RuntimeException e) {
            LOG.warn("rdma-disni: completion handler of {} threw", this, e);
        }
    }

    private void emit(CmEvent ev) {
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
    private void failed() {
        if (state == QpState.RTS) {
            state = QpState.ERROR;
            sendDisconnect();
        }
    }

    private void sendDisconnect() {
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

    @Override
    public void onCmEvent(int type, RdmaCmId cmId, CmNative.EventData data) {
        int status = data == null ? 0 : data.status();
        try {
            switch (type) {
                case CmEvents.ADDR_RESOLVED:
                    device.cm(() -> {
                        id.resolveRoute(device.cmTimeoutMs());
                        return null;
                    });
                    break;
                case CmEvents.ROUTE_RESOLVED:
                    // rdma_connect with the private data (Linux's RTRS: CON_REQ) and infinite RNR retry
                    device.cm(() -> {
                        CmNative.check(CmNative.connect(CmNative.handle(id), connectData, RETRY_COUNT,
                                RNR_RETRY_INFINITE), "rdma_connect");
                        return null;
                    });
                    break;
                case CmEvents.ESTABLISHED:
                    local = (InetSocketAddress) device.cm(id::getSource);
                    InetSocketAddress peer = (InetSocketAddress) device.cm(id::getDestination);
                    if (peer != null) {
                        remote = peer;
                    }
                    established(data == null ? null : data.privateData());
                    break;
                case CmEvents.ADDR_ERROR:
                case CmEvents.ROUTE_ERROR:
                case CmEvents.UNREACHABLE:
                    // rdma_cm's status here is a negative errno (e.g. -ETIMEDOUT: no answer to the REQ)
                    connectFailed(new CmEvent(CmEvent.Type.UNREACHABLE, status < 0 ? -status : Errno.EHOSTUNREACH,
                            "unreachable: " + remote + " (rdma_cm status " + status + ")"));
                    break;
                case CmEvents.REJECTED:
                    connectFailed(rejected(status, data));
                    break;
                case CmEvents.CONNECT_ERROR:
                    connectFailed(new CmEvent(CmEvent.Type.CONNECT_ERROR, status < 0 ? -status : Errno.ECONNABORTED,
                            "connect error (rdma_cm status " + status + ")"));
                    break;
                case CmEvents.DISCONNECTED:
                    if (state != QpState.CLOSED) {
                        state = QpState.ERROR;
                        sendDisconnect(); // moves our QP to ERROR so posted requests flush
                        emit(CmEvent.of(CmEvent.Type.DISCONNECTED));
                    }
                    break;
                case CmEvents.DEVICE_REMOVAL:
                    device.removalDetected(); // unpublished first, then this QP flushes via deviceRemoved()
                    break;
                default:
                    break;
            }
        } catch (IOException e) {
            connectFailed(new CmEvent(CmEvent.Type.CONNECT_ERROR, Errors.errno(e, Errno.EIO), e.getMessage()));
        }
    }

    /**
     * REJECTED's status is the IB CM's reject reason (iWARP: a negative errno). The CM
     * itself rejects a connect to a port nobody listens on (INVALID_SERVICE_ID): that is
     * UNREACHABLE/ECONNREFUSED, as a TCP reset is for the soft provider. A consumer reject
     * cannot carry the rejecter's reason: ECONNREFUSED with the reject's private data (IB:
     * its whole 148 bytes), where protocols put their reason.
     */
    private CmEvent rejected(int status, CmNative.EventData data) {
        if (status == IB_CM_REJ_INVALID_SERVICE_ID) {
            return new CmEvent(CmEvent.Type.UNREACHABLE, Errno.ECONNREFUSED, "nobody listens at " + remote);
        }
        String why = status == IB_CM_REJ_CONSUMER_DEFINED ? "rejected by " + remote
                : "rejected by " + remote + " (" + (status < 0 ? Errno.name(status) : "IB CM reason " + status) + ")";
        return new CmEvent(CmEvent.Type.REJECTED, Errno.ECONNREFUSED, why, data == null ? null : data.privateData());
    }

    private void connectFailed(CmEvent ev) {
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
        device.deliverOnCompletionThread(() -> never.forEach(p -> deliver(p.flushed())), false);
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
            device.deliverOnCompletionThread(() -> flushed.forEach(p -> deliver(p.flushed())), wait);
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
        }
        device.forget(id);
        device.forget(this);
        synchronized (cqLock) {
            cqClosed = true;
            try {
                if (!disconnectSent) {
                    disconnectSent = true;
                    id.disconnect();
                }
            } catch (IOException e) {
                LOG.debug("rdma-disni: disconnect on close", e);
            }
            poll.free();
            id.destroyQP();
            cq.destroyCQ();
            id.destroyId();
        }
        return flushed;
    }

    @Override
    public String toString() {
        return "disni-qp[" + device.name() + " " + local + " -> " + remote + " " + state + "]";
    }
}

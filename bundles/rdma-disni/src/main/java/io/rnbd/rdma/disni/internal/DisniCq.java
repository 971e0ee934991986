package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.impl.NatIbvCQ;
import io.rnbd.rdma.api.WcOpcode;
import io.rnbd.rdma.api.WcStatus;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rdma.disni.internal.DisniQueuePair.Posted;
import java.io.IOException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A queue pair's completion queue: polled only on the device's completion thread, each
 * {@link IbvWC} decoded into a {@link WorkCompletion} by the queue pair's record of what
 * was posted (DiSNI decodes nothing but wr_id and status of a failed completion).
 */
final class DisniCq implements CqPolling.Cq {
    /** The queue pair's logger: what it logged about its CQ it still logs. */
    private static final Logger LOG = LoggerFactory.getLogger(DisniQueuePair.class);
    private static final int IBV_WC_WITH_IMM = 1 << 1;
    private static final int IBV_WC_WITH_INV = 1 << 3;
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

    private final DisniQueuePair qp;
    private final IbvCQ cq;
    /** The ibv_cq pointer, as {@link CmNative#cqEvent} names the CQ that fired. */
    private final long handle;
    private final IbvWC[] wcs = new IbvWC[POLL_BATCH];
    private final SVCPollCq poll;
    private final Object cqLock = new Object();
    private boolean cqClosed;

    DisniCq(DisniQueuePair qp, IbvCQ cq) throws IOException {
        this.qp = qp;
        this.cq = cq;
        this.handle = ((NatIbvCQ) cq).getObjId();
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new IbvWC();
        }
        this.poll = cq.poll(wcs, wcs.length);
    }

    /** Whether {@code cq}, an event's, is this one. */
    boolean is(long cq) {
        return cq == handle;
    }

    /** On the completion thread: polls up to one batch into {@code out} (nothing once destroyed). */
    @Override
    public int poll(List<WorkCompletion> out) {
        synchronized (cqLock) {
            if (cqClosed) {
                return 0;
            }
            try {
                int n = poll.execute().getPolls();
                for (int i = 0; i < n; i++) {
                    WorkCompletion wc = translate(wcs[i]);
                    if (wc != null) {
                        out.add(wc);
                    }
                }
                return n;
            } catch (IOException e) {
                LOG.warn("rdma-disni: polling the CQ of {} failed", qp, e);
                return 0;
            }
        }
    }

    /** On the completion thread: posts what this round's deliveries posted on the queue pair. */
    @Override
    public boolean flush() {
        return qp.flushDeferred();
    }

    /** A system call on rxe (ibv_cmd_req_notify_cq). */
    @Override
    public void arm() {
        synchronized (cqLock) {
            if (cqClosed) {
                return;
            }
            try {
                cq.reqNotification(false).execute().free();
            } catch (IOException e) {
                LOG.warn("rdma-disni: arming the CQ of {} failed", qp, e);
            }
        }
    }

    private WorkCompletion translate(IbvWC wc) {
        long token = wc.getWr_id();
        Posted p = qp.retire(token);
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
        LOG.info("rdma-disni: {} completion status {} (ibv_wc_status) reported as GENERAL_ERR", qp, s);
        return WcStatus.GENERAL_ERR;
    }

    /**
     * Destroys this CQ with the QP and CM id it serves (under the CM lock), holding the CQ
     * lock so that no poll runs on them meanwhile: {@code disconnect} runs first, then the
     * poll call is freed and QP, CQ and id are destroyed.
     */
    void destroyWith(RdmaCmId id, Runnable disconnect) throws IOException {
        synchronized (cqLock) {
            cqClosed = true;
            disconnect.run();
            poll.free();
            id.destroyQP();
            cq.destroyCQ();
            id.destroyId();
        }
    }
}

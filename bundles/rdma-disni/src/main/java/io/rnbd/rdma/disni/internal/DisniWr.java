package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.IbvSendWR;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WcOpcode;
import io.rnbd.rdma.api.WrOpcode;
import java.util.List;

/**
 * The API's work requests in DiSNI's terms, the counterpart of {@link DisniCq}'s decoding:
 * the ibv_wr opcode of each, the completion opcode it will report, and its SGEs, which
 * carry an lkey only for regions of the queue pair's own device.
 */
final class DisniWr {
    /** enum ibv_wr_opcode's IBV_WR_SEND_WITH_INV (DiSNI has no constant for it). */
    private static final int IBV_WR_SEND_WITH_INV = 9;

    private DisniWr() {
    }

    /** Where {@link #sges} puts each SGE. */
    @FunctionalInterface
    interface SgeSink {
        /** Checks only. */
        SgeSink NONE = (addr, length, lkey) -> { };

        void sge(long addr, int length, int lkey);
    }

    /**
     * Fills {@code out} (at most {@code maxSge} entries) for a queue pair of {@code pd} on
     * {@code device}; returns whether an SGE names a region the adapter will refuse
     * (closed, or of another protection domain; an invalidated rkey does not matter
     * locally). Such a request is still
     * posted, so it fails in order with the requests around it; the adapter's status for
     * it (rxe says LOC_QP_OP_ERR, mlx5 LOC_PROT_ERR) is then reported as LOC_PROT_ERR.
     */
    static boolean sges(List<Sge> list, int maxSge, DisniProtectionDomain pd, DisniDevice device, SgeSink out)
            throws RdmaException {
        if (list.size() > maxSge || list.size() > SendChain.MAX_SGE) {
            throw new RdmaException(Errno.EINVAL, list.size() + " SGEs, queue pair takes " + maxSge);
        }
        boolean foreign = false;
        for (Sge s : list) {
            if (!(s.mr() instanceof DisniMemoryRegion mr)) {
                throw new RdmaException(Errno.EINVAL, "SGE names a memory region of another provider");
            }
            boolean ours = mr.pd() == pd && mr.usableLocally();
            foreign |= !ours;
            // another device's lkey could be valid here by chance: never hand it over
            out.sge(mr.address() + s.offset(), s.length(), ours || mr.pd().device() == device ? mr.lkey() : 0);
        }
        return foreign;
    }

    static int opcode(WrOpcode op) {
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

    static WcOpcode wcOpcode(WrOpcode op) {
        switch (op) {
            case SEND:
            case SEND_WITH_IMM:
            case SEND_WITH_INV: return WcOpcode.SEND;
            case RDMA_WRITE:
            case RDMA_WRITE_WITH_IMM: return WcOpcode.RDMA_WRITE;
            default: return WcOpcode.RDMA_READ;
        }
    }
}

package io.rnbd.rdma.api;

/** Send queue work request opcodes (IBV_WR_*). */
public enum WrOpcode {
    SEND,
    SEND_WITH_IMM,
    RDMA_WRITE,
    RDMA_WRITE_WITH_IMM,
    RDMA_READ,
    /**
     * A SEND that also invalidates, at the receiver, the remote key in the request's
     * {@code imm} field (IBV_WR_SEND_WITH_INV; ibv_send_wr keeps invalidate_rkey in the
     * same union as imm_data). RTRS's server answers a read that asked for NEED_INVAL with
     * one, so the client's registration dies before the client sees the data.
     */
    SEND_WITH_INV;

    public boolean hasImm() {
        return this == SEND_WITH_IMM || this == RDMA_WRITE_WITH_IMM;
    }

    /** Whether the receiver consumes a posted RECV for it. */
    public boolean consumesRecv() {
        return this == SEND || this == SEND_WITH_IMM || this == SEND_WITH_INV || this == RDMA_WRITE_WITH_IMM;
    }

    public boolean isRdma() {
        return this == RDMA_WRITE || this == RDMA_WRITE_WITH_IMM || this == RDMA_READ;
    }
}

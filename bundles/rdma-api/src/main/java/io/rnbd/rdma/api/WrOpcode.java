package io.rnbd.rdma.api;

/** Send queue work request opcodes (IBV_WR_*). */
public enum WrOpcode {
    SEND,
    SEND_WITH_IMM,
    RDMA_WRITE,
    RDMA_WRITE_WITH_IMM,
    RDMA_READ;

    public boolean hasImm() {
        return this == SEND_WITH_IMM || this == RDMA_WRITE_WITH_IMM;
    }

    public boolean isRdma() {
        return this == RDMA_WRITE || this == RDMA_WRITE_WITH_IMM || this == RDMA_READ;
    }
}

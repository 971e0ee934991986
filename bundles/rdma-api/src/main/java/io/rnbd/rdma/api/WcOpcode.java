package io.rnbd.rdma.api;

/** What a completion completes (IBV_WC_*). */
public enum WcOpcode {
    SEND,
    RDMA_WRITE,
    RDMA_READ,
    RECV,
    /** A RECV consumed by an incoming RDMA_WRITE_WITH_IMM: only the immediate is delivered. */
    RECV_RDMA_WITH_IMM
}

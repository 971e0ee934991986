package io.rnbd.rdma.api;

/** What a completion completes (IBV_WC_*). */
public enum WcOpcode {
    SEND,
    RDMA_WRITE,
    RDMA_READ,
    RECV,
    /** A RECV consumed by an incoming RDMA_WRITE_WITH_IMM: only the immediate is delivered. */
    RECV_RDMA_WITH_IMM,
    /** A {@link QueuePair#postInvalidate} done: the region's old rkey is refused from now on. */
    LOCAL_INV,
    /** A {@link QueuePair#postReregister} that failed (it is never signaled). */
    REG_MR
}

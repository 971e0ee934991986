package io.rnbd.rdma.api;

import io.rnbd.common.Errno;

/** Work completion status (IBV_WC_*). Anything but SUCCESS moves the QP to ERROR. */
public enum WcStatus {
    SUCCESS,
    /** Local length error: a received message did not fit the posted RECV. */
    LOC_LEN_ERR,
    /** Local protection error: an SGE named a region that is gone or not ours. */
    LOC_PROT_ERR,
    /** The QP went to ERROR before this request ran. */
    WR_FLUSH_ERR,
    /** The peer refused an RDMA access: bad, stale or wrong-access rkey, or out of bounds. */
    REM_ACCESS_ERR,
    /** The peer could not carry out the operation. */
    REM_OP_ERR,
    /** The peer did not answer (transport retries exhausted). */
    RETRY_EXC_ERR,
    /** The peer never posted a RECV in time. */
    RNR_RETRY_EXC_ERR,
    GENERAL_ERR;

    /** The errno an upper layer should report for this status. */
    public int errno() {
        switch (this) {
            case SUCCESS: return Errno.OK;
            case REM_ACCESS_ERR:
            case LOC_PROT_ERR: return Errno.EACCES;
            case RETRY_EXC_ERR:
            case RNR_RETRY_EXC_ERR: return Errno.ETIMEDOUT;
            case WR_FLUSH_ERR: return Errno.ECONNRESET;
            case LOC_LEN_ERR: return Errno.EMSGSIZE;
            default: return Errno.EIO;
        }
    }
}

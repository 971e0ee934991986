package io.rnbd.rdma.api;

/**
 * The outcome of one work request.
 *
 * @param wrId    the request's cookie
 * @param status  success or why not
 * @param opcode  what completed
 * @param byteLen bytes received (RECV) or transferred
 * @param hasImm  whether {@code imm} carries immediate data
 * @param imm     immediate data of a SEND_WITH_IMM or RDMA_WRITE_WITH_IMM
 * @param invalidatedRkey the remote key a received SEND_WITH_INV invalidated
 *                (IBV_WC_WITH_INV, ibv_wc's invalidated_rkey), or null
 */
public record WorkCompletion(long wrId, WcStatus status, WcOpcode opcode, int byteLen, boolean hasImm, int imm,
                             Integer invalidatedRkey) {
    public WorkCompletion(long wrId, WcStatus status, WcOpcode opcode, int byteLen, boolean hasImm, int imm) {
        this(wrId, status, opcode, byteLen, hasImm, imm, null);
    }

    public boolean ok() {
        return status == WcStatus.SUCCESS;
    }

    /** Whether this RECV completion came from a SEND_WITH_INV. */
    public boolean withInv() {
        return invalidatedRkey != null;
    }
}

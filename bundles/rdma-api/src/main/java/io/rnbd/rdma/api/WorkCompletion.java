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
 */
public record WorkCompletion(long wrId, WcStatus status, WcOpcode opcode, int byteLen, boolean hasImm, int imm) {
    public boolean ok() {
        return status == WcStatus.SUCCESS;
    }
}

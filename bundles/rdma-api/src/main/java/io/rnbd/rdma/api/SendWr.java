package io.rnbd.rdma.api;

import java.util.List;

/**
 * A send queue work request.
 *
 * @param wrId       caller's cookie, echoed in the completion
 * @param opcode     what to do
 * @param sgl        local memory: the source for SEND/WRITE, the destination for READ
 * @param imm        immediate data for the {@code *_WITH_IMM} opcodes; the remote key to
 *                   invalidate for {@link WrOpcode#SEND_WITH_INV}
 * @param remoteAddr remote virtual address for RDMA ops
 * @param rkey       remote key for RDMA ops
 * @param signaled   whether a successful completion is reported (errors always are)
 */
public record SendWr(long wrId, WrOpcode opcode, List<Sge> sgl, int imm, long remoteAddr, int rkey,
                     boolean signaled) {
    public SendWr {
        sgl = List.copyOf(sgl);
        if (opcode == null) {
            throw new IllegalArgumentException("opcode required");
        }
    }

    public static SendWr send(long wrId, List<Sge> sgl) {
        return new SendWr(wrId, WrOpcode.SEND, sgl, 0, 0, 0, true);
    }

    public static SendWr sendWithImm(long wrId, List<Sge> sgl, int imm) {
        return new SendWr(wrId, WrOpcode.SEND_WITH_IMM, sgl, imm, 0, 0, true);
    }

    /** SEND (possibly empty) that invalidates the receiver's region under {@code rkey}. */
    public static SendWr sendWithInv(long wrId, List<Sge> sgl, int rkey) {
        return new SendWr(wrId, WrOpcode.SEND_WITH_INV, sgl, rkey, 0, 0, true);
    }

    public static SendWr write(long wrId, List<Sge> sgl, long remoteAddr, int rkey) {
        return new SendWr(wrId, WrOpcode.RDMA_WRITE, sgl, 0, remoteAddr, rkey, true);
    }

    public static SendWr writeWithImm(long wrId, List<Sge> sgl, long remoteAddr, int rkey, int imm) {
        return new SendWr(wrId, WrOpcode.RDMA_WRITE_WITH_IMM, sgl, imm, remoteAddr, rkey, true);
    }

    public static SendWr read(long wrId, List<Sge> sgl, long remoteAddr, int rkey) {
        return new SendWr(wrId, WrOpcode.RDMA_READ, sgl, 0, remoteAddr, rkey, true);
    }

    public SendWr unsignaled() {
        return new SendWr(wrId, opcode, sgl, imm, remoteAddr, rkey, false);
    }

    public long totalLength() {
        long n = 0;
        for (Sge s : sgl) {
            n += s.length();
        }
        return n;
    }
}

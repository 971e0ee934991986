package io.rnbd.rdma.api;

/**
 * What a new reliable-connected queue pair needs (ibv_qp_init_attr).
 *
 * @param pd          the protection domain its SGEs and regions must belong to
 * @param maxSendWr   outstanding send-queue requests
 * @param maxRecvWr   outstanding receive-queue requests
 * @param maxSge      SGEs per request
 * @param completions where completions go
 */
public record QpInit(ProtectionDomain pd, int maxSendWr, int maxRecvWr, int maxSge, CompletionHandler completions) {
    public QpInit {
        if (pd == null || completions == null) {
            throw new IllegalArgumentException("pd and completion handler required");
        }
        if (maxSendWr <= 0 || maxRecvWr <= 0 || maxSge <= 0) {
            throw new IllegalArgumentException("queue sizes must be positive");
        }
    }
}

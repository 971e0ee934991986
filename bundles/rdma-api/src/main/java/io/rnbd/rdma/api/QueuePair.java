package io.rnbd.rdma.api;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * A reliable-connected queue pair together with its connection (an rdma_cm_id with a QP).
 *
 * <p>Reliable-connected semantics: requests execute in posting order; a SEND consumes the
 * peer's oldest posted RECV, and waits (receiver-not-ready, flow controlled) while none is
 * posted instead of being dropped; immediate data arrives with the RECV completion. On
 * any error the QP goes to {@link QpState#ERROR}, the connection drops, and every
 * outstanding request on both queues completes with {@link WcStatus#WR_FLUSH_ERR}.
 */
public interface QueuePair extends AutoCloseable {
    RdmaDevice device();

    ProtectionDomain pd();

    QpState state();

    InetSocketAddress localAddress();

    InetSocketAddress remoteAddress();

    /** Post to the send queue. Refused with ENOTCONN in ERROR/CLOSED, ENOMEM when full. */
    void postSend(SendWr wr) throws RdmaException;

    /**
     * Post a chain of send requests with one doorbell, as {@code ibv_post_send} takes a
     * linked list: they execute in list order, as if posted one by one. A provider for which
     * every post costs a system call (the soft provider's socket write) sends the chain in
     * one. On an exception the requests before the refused one may have been posted; their
     * completions come as usual.
     */
    default void postSend(List<SendWr> chain) throws RdmaException {
        for (SendWr wr : chain) {
            postSend(wr);
        }
    }

    /** Post to the receive queue. Allowed from INIT on. */
    void postRecv(RecvWr wr) throws RdmaException;

    /**
     * Start an orderly disconnect (rdma_disconnect): both sides get
     * {@link CmEvent.Type#DISCONNECTED} and outstanding requests flush.
     */
    void disconnect();

    /** Disconnect if needed and destroy. Idempotent. */
    @Override
    void close();
}

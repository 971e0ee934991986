package io.rnbd.rdma.api;

import java.net.InetSocketAddress;

/**
 * An incoming connection request (RDMA_CM_EVENT_CONNECT_REQUEST). Exactly one of
 * {@link #accept} or {@link #reject} must be called, from any thread.
 */
public interface ConnectRequest {
    RdmaDevice device();

    InetSocketAddress localAddress();

    InetSocketAddress remoteAddress();

    /** The initiator's private data; empty where the provider cannot carry it. */
    byte[] privateData();

    /**
     * Accept: creates the queue pair. RECVs can be posted on it before the initiator's
     * first SEND arrives; {@link CmEvent.Type#ESTABLISHED} follows on {@code events}.
     */
    QueuePair accept(QpInit init, CmEventHandler events) throws RdmaException;

    /** Refuse; the initiator sees {@link CmEvent.Type#REJECTED} with {@code reason}. */
    void reject(int reason);
}

package io.rnbd.rdma.api;

import io.rnbd.common.Errno;

import java.net.InetSocketAddress;

/**
 * An incoming connection request (RDMA_CM_EVENT_CONNECT_REQUEST). Exactly one of
 * {@link #accept} or {@link #reject} must be called, from any thread.
 */
public interface ConnectRequest {
    RdmaDevice device();

    InetSocketAddress localAddress();

    InetSocketAddress remoteAddress();

    /**
     * The initiator's private data ({@code event->param.conn.private_data}), at most
     * {@link CmPrivateData#CONNECT_MAX} bytes. A provider that carries IB CM private data
     * may deliver more bytes than were sent (an IB REQ always carries its full field): the
     * protocol on top reads what it knows and ignores the rest.
     */
    byte[] privateData();

    /**
     * Accept (rdma_accept with {@code privateData} in the REP, at most
     * {@link CmPrivateData#ACCEPT_MAX} bytes): creates the queue pair, runs
     * {@code beforeAccept} on it (post the RECVs the initiator's first SEND needs there:
     * nothing can arrive before it returns), then answers. {@link CmEvent.Type#ESTABLISHED}
     * follows on {@code events}; the initiator's ESTABLISHED carries {@code privateData}.
     * If {@code beforeAccept} throws, the request is rejected and the queue pair destroyed.
     */
    QueuePair accept(QpInit init, CmEventHandler events, byte[] privateData, QpSetup beforeAccept)
            throws RdmaException;

    /** {@link #accept(QpInit, CmEventHandler, byte[], QpSetup)} with no private data and no setup. */
    default QueuePair accept(QpInit init, CmEventHandler events) throws RdmaException {
        return accept(init, events, new byte[0], qp -> { });
    }

    /**
     * Refuse (rdma_reject with {@code privateData}, at most {@link CmPrivateData#REJECT_MAX}
     * bytes, as a consumer-defined reject). The initiator sees {@link CmEvent.Type#REJECTED}
     * carrying {@code privateData}; its status is {@code reason} where the provider can
     * carry it, else {@link Errno#ECONNREFUSED}.
     */
    void reject(int reason, byte[] privateData);

    /** {@link #reject(int, byte[])} without private data. */
    default void reject(int reason) {
        reject(reason, new byte[0]);
    }

    /** What runs on a new queue pair between its creation and the accept going out. */
    @FunctionalInterface
    interface QpSetup {
        void setUp(QueuePair qp) throws RdmaException;
    }
}

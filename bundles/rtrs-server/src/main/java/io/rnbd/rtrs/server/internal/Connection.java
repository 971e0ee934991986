package io.rnbd.rtrs.server.internal;

import io.rnbd.rdma.api.CmEventHandler;
import io.rnbd.rdma.api.CompletionHandler;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaException;

/**
 * A connection of a path that the session table reserved for a connect request, as the
 * {@link Acceptor} hands it to the provider's accept and closes it when its device leaves.
 * {@link ServerCon} has the one implementation. A door of its own, not a member of
 * {@link Sessions}: {@link DeviceContext} holds these, and {@code Sessions} names the device.
 */
interface Connection extends CompletionHandler, CmEventHandler {
    /** Between the queue pair's creation and the accept: its receives posted. */
    void setUp(QueuePair q) throws RdmaException;

    /** The accept failed: the path fails. */
    void acceptFailed(int errno);

    /** Destroy the queue pair and buffers (the device leaves). Idempotent. */
    void close();
}

package io.rnbd.rdma.api;

/** Receives one connection's CM events, one at a time, on a provider thread. */
@FunctionalInterface
public interface CmEventHandler {
    void onEvent(QueuePair qp, CmEvent event);
}

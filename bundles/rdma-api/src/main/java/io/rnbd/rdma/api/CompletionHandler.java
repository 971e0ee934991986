package io.rnbd.rdma.api;

/**
 * Receives a queue pair's completions (its CQ, already polled). Called by a provider
 * thread, one completion at a time per queue pair, send completions in posting order and
 * receive completions in arrival order. Must not block: hand long work to an executor.
 */
@FunctionalInterface
public interface CompletionHandler {
    void onCompletion(QueuePair qp, WorkCompletion wc);
}

package io.rnbd.rdma.api;

/**
 * Receives a queue pair's completions (its CQ, already polled). Called by a provider
 * thread, one completion at a time per queue pair, send completions in posting order and
 * receive completions in arrival order. Must not block: hand long work to an executor.
 *
 * <p>A provider that delivers completions in passes runs them on a {@link CompletionThread},
 * inside its {@link CompletionBatch}: work the handler (or what it calls on that thread)
 * defers there runs once, after the last completion of the pass.
 */
@FunctionalInterface
public interface CompletionHandler {
    void onCompletion(QueuePair qp, WorkCompletion wc);
}

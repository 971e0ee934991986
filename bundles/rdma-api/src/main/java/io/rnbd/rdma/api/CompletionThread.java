package io.rnbd.rdma.api;

/**
 * A provider thread that delivers completions in passes, each inside this thread's
 * {@link CompletionBatch}: how a provider that batches says so. Its {@link CompletionHandler}s,
 * and everything they call on this thread (RTRS's {@code IoDone}, a block device's futures),
 * find the batch with {@link CompletionBatch#ofCurrentThread()}. A provider whose threads are
 * plain threads opens no batch: work deferred on them runs at once.
 *
 * <p>A class, not an interface, so that finding the batch is a class check and a field load on
 * every completion; a provider makes its completion threads as this (or a subclass) and opens
 * and closes {@link #completionBatch()} around each pass on them.
 */
public class CompletionThread extends Thread {
    private final CompletionBatch batch = new CompletionBatch(this);

    public CompletionThread(Runnable target, String name) {
        super(target, name);
    }

    /** This thread's batch, the same object every time; opened and closed only on this thread. */
    public final CompletionBatch completionBatch() {
        return batch;
    }
}

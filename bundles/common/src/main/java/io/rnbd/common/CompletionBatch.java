package io.rnbd.common;

import java.util.ArrayList;

/**
 * <b>Deprecated: nothing in the appliance opens this batch any more.</b> The completion batch is
 * part of the verbs SPI ({@code io.rnbd.rdma.api.CompletionBatch}, opened by a provider's
 * {@code CompletionThread}); this class stays, unchanged and unused, so that bundles built
 * against common 1.x keep resolving, and goes at common 2.0. What follows is what it always did.
 *
 * <p>The end of an event loop's completion pass, as a place to put work. An IO thread (the soft
 * RDMA provider's reactor) opens its batch around the completions that one ready socket
 * brought; what those completions {@link #defer} runs once, after the last of them, on the
 * same thread. So the layers above can gather what a burst of completions produces (the NBD
 * gateway: many replies, one socket write and one wakeup of the client, where each reply alone
 * cost both) without a thread of their own and without waiting for anything: the pass ends
 * microseconds later. Outside a batch (another thread, a provider that opens none) deferred
 * work runs at once, which is what it did before batches existed.
 *
 * <p>Not thread-safe by design: a batch belongs to the thread that made it
 * ({@link #ofThisThread}), and {@link #defer} only ever sees the calling thread's.
 */
@Deprecated(since = "1.5", forRemoval = true)
public final class CompletionBatch {
    private static final ThreadLocal<CompletionBatch> CURRENT = new ThreadLocal<>();

    private final ArrayList<Runnable> deferred = new ArrayList<>();
    private boolean open;

    private CompletionBatch() {
    }

    /** This thread's batch, made on first use; an event loop takes it once and keeps it. */
    public static CompletionBatch ofThisThread() {
        CompletionBatch b = CURRENT.get();
        if (b == null) {
            b = new CompletionBatch();
            CURRENT.set(b);
        }
        return b;
    }

    /** Completions from here until {@link #end} are one batch. */
    public void begin() {
        open = true;
    }

    /**
     * Closes the batch and runs what was deferred in it, in the order first deferred. Work
     * that one of them defers runs at once (the batch is closed). If some fail, the others
     * still run; the first failure is thrown afterwards.
     */
    public void end() {
        open = false;
        if (deferred.isEmpty()) {
            return;
        }
        RuntimeException failed = null;
        for (int i = 0; i < deferred.size(); i++) {
            Runnable r = deferred.get(i);
            try {
                r.run();
            } catch (RuntimeException e) {
                if (failed == null) {
                    failed = e;
                } else {
                    failed.addSuppressed(e);
                }
            }
        }
        deferred.clear();
        if (failed != null) {
            throw failed;
        }
    }

    /** Whether the calling thread is inside an open batch (what it defers waits for the end). */
    public static boolean active() {
        CompletionBatch b = CURRENT.get();
        return b != null && b.open;
    }

    /**
     * Run {@code work} at the end of the calling thread's open batch, once however often it is
     * deferred there (compared by identity: defer the same object), or now if no batch is open.
     */
    public static void defer(Runnable work) {
        CompletionBatch b = CURRENT.get();
        if (b == null || !b.open) {
            work.run();
            return;
        }
        for (int i = 0; i < b.deferred.size(); i++) {
            if (b.deferred.get(i) == work) {
                return;
            }
        }
        b.deferred.add(work);
    }
}

package io.rnbd.rdma.api;

import java.util.ArrayList;

/**
 * The batch a provider's completion pass opens: the end of the pass as a place to put work. A
 * provider thread that delivers completions in passes (the soft provider's IO thread: the
 * completions one ready socket brought) is a {@link CompletionThread}, and opens its batch
 * around each pass ({@link #begin}, {@link #end}); what the completions of the pass, and
 * whatever they call on that thread, {@link #defer} runs once, after the last of them, on the
 * same thread. So the layers above can gather what a burst of completions produces (the NBD
 * gateway: many replies, one socket write and one wakeup of the client, where each reply alone
 * cost both) without a thread of their own and without waiting for anything: the pass ends
 * microseconds later.
 *
 * <p>A layer above asks for "run this at the end of the current pass" with
 * {@code CompletionBatch.ofCurrentThread().defer(work)}: the batch is found through the thread
 * that runs the completion, as Linux's block layer finds a task's plug ({@code current->plug},
 * {@code blk_check_plugged}), because between the provider and the gateway the completion
 * crosses RTRS's {@code IoDone} and the block layer's futures, which carry no batch. Outside an
 * open batch (another thread, a provider that opens none: {@link #NONE}) deferred work runs at
 * once, which is what it did before batches existed.
 *
 * <p>Not thread-safe by design: a batch belongs to the thread that owns it; only that thread
 * opens and closes it, and {@link #defer} from any other thread runs the work at once.
 */
public final class CompletionBatch {
    /** The batch of every thread that delivers no completions in passes: never open. */
    public static final CompletionBatch NONE = new CompletionBatch();

    private final Thread owner;
    private final ArrayList<Runnable> deferred;
    private boolean open;

    /** The batch of {@code owner}, made once by the thread itself; only it may open the batch. */
    CompletionBatch(CompletionThread owner) {
        this.owner = owner;
        this.deferred = new ArrayList<>();
    }

    private CompletionBatch() {
        this.owner = null;
        this.deferred = null;
    }

    /**
     * The batch of the calling thread: its own if it is a provider's {@link CompletionThread},
     * else {@link #NONE}. Allocates nothing.
     */
    public static CompletionBatch ofCurrentThread() {
        // a class check (CompletionThread is a class): no scan of interfaces per completion
        return Thread.currentThread() instanceof CompletionThread t ? t.completionBatch() : NONE;
    }

    /** Completions from here until {@link #end} are one batch. Owner thread only. */
    public void begin() {
        checkOwner();
        open = true;
    }

    /**
     * Closes the batch and runs what was deferred in it, in the order first deferred. Work
     * that one of them defers runs at once (the batch is closed). If some fail, the others
     * still run; the first failure is thrown afterwards. Owner thread only.
     */
    public void end() {
        checkOwner();
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

    /** Whether the batch is open and the calling thread is its owner (what it defers waits for the end). */
    public boolean open() {
        return open && Thread.currentThread() == owner;
    }

    /**
     * Run {@code work} at the end of this batch, once however often it is deferred there
     * (compared by identity: defer the same object), or now if the batch is not open or the
     * calling thread does not own it.
     */
    public void defer(Runnable work) {
        if (!open()) {
            work.run();
            return;
        }
        for (int i = 0; i < deferred.size(); i++) {
            if (deferred.get(i) == work) {
                return;
            }
        }
        deferred.add(work);
    }

    private void checkOwner() {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException(owner == null
                    ? "CompletionBatch.NONE is never opened"
                    : "a completion batch is opened and closed by its own thread, " + owner.getName());
        }
    }
}

package io.rnbd.rdma.disni.internal;

import io.rnbd.rdma.api.WorkCompletion;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * How a completion queue is drained, apart from the verbs: poll and deliver until the CQ is
 * empty, then arm it and poll once more, as NAPI does. The CQ stays unarmed while completions
 * keep coming, so that a busy connection costs no event, no wake-up and no re-arm (a system
 * call on rxe) per completion, and what a handler posts (always_invalidate's invalidation, say)
 * is picked up by the next poll when it has completed by then. What the deliveries post goes
 * to the adapter in one post when the CQ is found empty or the budget is spent, and before the
 * CQ is armed, so that what completes inside that post needs no event either.
 */
final class CqPolling {
    /** What the loop needs of a CQ. */
    interface Cq {
        /** Polls up to one batch into {@code out}; how many entries it took off the CQ, flushed ones included. */
        int poll(List<WorkCompletion> out);

        /** Asks for an event at the next completion; covers only what completes after it. */
        void arm();

        /**
         * Hands the adapter what the deliveries posted (they wait for it, as a plug holds bios);
         * true if anything went out, which may have completed by the time it returns.
         */
        boolean flush();
    }

    private CqPolling() {
    }

    /**
     * Drains {@code cq} into {@code deliver}. Stops after {@code budget} polls with completions,
     * so that one busy connection does not starve the others of its thread; then returns true,
     * and the caller must call again: what is left may have completed before any arm, and no
     * event comes for it. Returns false once the CQ was found empty after an arm: an event is
     * due for whatever completes from then on.
     */
    static boolean drain(Cq cq, int budget, Consumer<WorkCompletion> deliver) {
        // a list per call, not per completion: a handler may close the device from this thread,
        // and the close drains this CQ again
        List<WorkCompletion> completed = new ArrayList<>();
        boolean armed = false;
        int polls = 0;
        while (true) {
            completed.clear();
            if (cq.poll(completed) == 0) {
                if (cq.flush()) {
                    // before any arm: on rxe what was posted has often completed inside the post
                    continue;
                }
                if (armed) {
                    return false;
                }
                cq.arm();
                armed = true;
                continue;
            }
            for (WorkCompletion wc : completed) {
                deliver.accept(wc);
            }
            if (++polls == budget) {
                cq.flush();
                return true;
            }
        }
    }
}

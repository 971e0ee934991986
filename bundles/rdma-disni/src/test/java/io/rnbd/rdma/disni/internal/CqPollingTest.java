package io.rnbd.rdma.disni.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.WcOpcode;
import io.rnbd.rdma.api.WcStatus;
import io.rnbd.rdma.api.WorkCompletion;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The poll loop against a scripted CQ: what it promises is that nothing is left in a CQ that
 * no event will announce, with one arm per drain however many completions came.
 */
class CqPollingTest {
    /** A CQ that hands out at most 32 entries a poll, records each call, and can take entries as they "complete". */
    private static final class ScriptedCq implements CqPolling.Cq {
        final ArrayDeque<WorkCompletion> entries = new ArrayDeque<>();
        final List<String> calls = new ArrayList<>();
        /** Entries that complete while the arm's system call runs (between the last poll and the arm). */
        int completeDuringArm;
        /** Entries that complete with every poll (a connection that never goes quiet). */
        int completeWithEveryPoll;
        /** Requests the deliveries posted since the last flush. */
        int posted;
        /** Whether a flush's requests have completed when it returns (rxe over the loopback: the peer answers inside the post). */
        boolean completeInFlush = true;
        long next;

        void post() {
            posted++;
        }

        void complete(int n) {
            for (int i = 0; i < n; i++) {
                entries.add(new WorkCompletion(next++, WcStatus.SUCCESS, WcOpcode.RECV, 4096, false, 0));
            }
        }

        @Override
        public int poll(List<WorkCompletion> out) {
            complete(completeWithEveryPoll);
            int n = 0;
            while (n < 32 && !entries.isEmpty()) {
                out.add(entries.poll());
                n++;
            }
            calls.add("poll " + n);
            return n;
        }

        @Override
        public void arm() {
            calls.add("arm");
            complete(completeDuringArm);
            completeDuringArm = 0;
        }

        @Override
        public boolean flush() {
            if (posted == 0) {
                return false;
            }
            calls.add("flush " + posted);
            if (completeInFlush) {
                complete(posted);
            }
            posted = 0;
            return true;
        }
    }

    private final List<Long> delivered = new ArrayList<>();

    @Test
    void anEmptyCqIsArmedAndPolledOnceMore() {
        ScriptedCq cq = new ScriptedCq();
        assertFalse(CqPolling.drain(cq, 16, wc -> delivered.add(wc.wrId())));
        assertEquals(List.of("poll 0", "arm", "poll 0"), cq.calls);
    }

    @Test
    void aBacklogIsDrainedInBatchesThenArmedOnce() {
        ScriptedCq cq = new ScriptedCq();
        cq.complete(40);
        assertFalse(CqPolling.drain(cq, 16, wc -> delivered.add(wc.wrId())));
        assertEquals(40, delivered.size());
        assertEquals(List.of("poll 32", "poll 8", "poll 0", "arm", "poll 0"), cq.calls);
    }

    @Test
    void whatCompletesBetweenTheLastPollAndTheArmIsDeliveredNotStranded() {
        // rxe raises no event for what was in the CQ before the arm: only the poll after it finds it
        ScriptedCq cq = new ScriptedCq();
        cq.complete(1);
        cq.completeDuringArm = 2;
        assertFalse(CqPolling.drain(cq, 16, wc -> delivered.add(wc.wrId())));
        assertEquals(List.of(0L, 1L, 2L), delivered);
        assertEquals(List.of("poll 1", "poll 0", "arm", "poll 2", "poll 0"), cq.calls);
    }

    @Test
    void whatAHandlerPostsIsPolledWithoutAnArmWhenItCompletedAlready() {
        // always_invalidate: a request's invalidation is posted from its completion's handler
        ScriptedCq cq = new ScriptedCq();
        cq.complete(1);
        assertFalse(CqPolling.drain(cq, 16, wc -> {
            delivered.add(wc.wrId());
            if (wc.wrId() == 0) {
                cq.complete(1);
            }
        }));
        assertEquals(List.of(0L, 1L), delivered);
        assertEquals(List.of("poll 1", "poll 1", "poll 0", "arm", "poll 0"), cq.calls);
    }

    @Test
    void aConnectionThatNeverGoesQuietGivesBackItsThreadAfterItsBudgetUnarmed() {
        ScriptedCq cq = new ScriptedCq();
        cq.completeWithEveryPoll = 1;
        assertTrue(CqPolling.drain(cq, 3, wc -> delivered.add(wc.wrId())), "must be called again");
        assertEquals(3, delivered.size());
        assertEquals(List.of("poll 1", "poll 1", "poll 1"), cq.calls);
    }

    @Test
    void aBudgetThatRunsOutAfterTheArmStillAsksToBeCalledAgain() {
        // what the arm's poll left behind completed before the arm: no event will come for it
        ScriptedCq cq = new ScriptedCq();
        cq.completeDuringArm = 40;
        assertTrue(CqPolling.drain(cq, 1, wc -> delivered.add(wc.wrId())));
        assertEquals(32, delivered.size());
        assertEquals(8, cq.entries.size());
        assertFalse(CqPolling.drain(cq, 16, wc -> delivered.add(wc.wrId())));
        assertEquals(40, delivered.size());
        assertEquals(List.of("poll 0", "arm", "poll 32", "poll 8", "poll 0", "arm", "poll 0"), cq.calls);
    }

    @Test
    void aRoundsPostsGoOutInOneFlushAndWhatCompletedInItIsPolledBeforeAnyArm() {
        // the server answers three requests: one post for the three, no event for their completions
        ScriptedCq cq = new ScriptedCq();
        cq.complete(3);
        assertFalse(CqPolling.drain(cq, 16, wc -> {
            delivered.add(wc.wrId());
            if (wc.wrId() < 3) {
                cq.post();
            }
        }));
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L), delivered);
        assertEquals(List.of("poll 3", "poll 0", "flush 3", "poll 3", "poll 0", "arm", "poll 0"), cq.calls);
    }

    @Test
    void postsThatCompleteLaterAreFlushedBeforeTheArm() {
        // hardware: the completion comes after the post returns, and the arm's event announces it
        ScriptedCq cq = new ScriptedCq();
        cq.completeInFlush = false;
        cq.complete(1);
        assertFalse(CqPolling.drain(cq, 16, wc -> cq.post()));
        assertEquals(List.of("poll 1", "poll 0", "flush 1", "poll 0", "arm", "poll 0"), cq.calls);
        assertEquals(0, cq.posted, "nothing may wait past the drain");
    }

    @Test
    void aSpentBudgetFlushesWhatWasPostedBeforeGivingTheThreadBack() {
        ScriptedCq cq = new ScriptedCq();
        cq.completeWithEveryPoll = 1;
        cq.completeInFlush = false;
        assertTrue(CqPolling.drain(cq, 2, wc -> cq.post()));
        assertEquals(List.of("poll 1", "poll 1", "flush 2"), cq.calls);
        assertEquals(0, cq.posted, "nothing may wait past the drain");
    }
}

package io.rnbd.rtrs.core;

import io.rnbd.testkit.FakeScheduler;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SessionLockTest {
    private final FakeScheduler timer = new FakeScheduler();
    private final List<String> log = new ArrayList<>();
    private final Object owner = new Object();

    /** A stage that records where its work ran, and whether the lock was held then. */
    private final class Posts implements SessionLock.Stage<List<String>> {
        final List<String> queued = new ArrayList<>();
        int sections;

        @Override
        public void beforeUnlock() {
            sections++;
        }

        @Override
        public List<String> take() {
            if (queued.isEmpty()) {
                return null;
            }
            List<String> w = new ArrayList<>(queued);
            queued.clear();
            return w;
        }

        @Override
        public void run(List<String> work) {
            log.add("posts " + work + (Thread.holdsLock(owner) ? " (locked)" : ""));
        }
    }

    private final Posts posts = new Posts();
    private final SessionLock<List<String>> lock = new SessionLock<>(owner, LoggerFactory.getLogger(getClass()), timer,
            posts);

    private Runnable note(String s) {
        return () -> log.add(s + (Thread.holdsLock(owner) ? " (locked)" : ""));
    }

    @Test
    void whatASectionLeavesRunsAfterTheUnlockInOrderTeardownOnTheTimer() {
        lock.locked(() -> {
            assertTrue(Thread.holdsLock(owner));
            lock.defer(note("callback"));
            posts.queued.add("p1");
            lock.closeAfterUnlock(note("teardown"));
        });
        assertEquals(List.of("posts [p1]", "callback"), log, "posts then callbacks, outside the lock");
        assertEquals(1, posts.sections);
        timer.runDue();
        assertEquals(List.of("posts [p1]", "callback", "teardown"), log, "teardown on the timer thread");
    }

    @Test
    void lockedAndReleaseTearsDownHereFirst() {
        lock.lockedAndRelease(() -> {
            lock.defer(note("callback"));
            lock.closeAfterUnlock(note("teardown"));
        });
        assertEquals(List.of("teardown", "callback"), log);
        assertEquals(0, timer.pending());
    }

    @Test
    void nestedSectionsLeaveTheWorkToTheOutermost() {
        lock.locked(() -> {
            lock.locked(() -> lock.defer(note("inner")));
            assertTrue(log.isEmpty(), "nothing ran inside the outer section");
            lock.defer(note("outer"));
        });
        assertEquals(List.of("inner", "outer"), log);
        assertEquals(2, posts.sections, "the stage sees the end of every section");
    }

    @Test
    void anExplicitSectionRunsItsWorkAtAfterUnlockAndNotWhileStillHeld() {
        synchronized (lock.monitor()) {
            lock.defer(note("cb"));
            lock.afterUnlock(); // nested in a section: nothing runs under the lock
            assertTrue(log.isEmpty());
        }
        lock.afterUnlock();
        assertEquals(List.of("cb"), log);
    }

    @Test
    void workQueuedWhileDrainingRunsInTheSameCall() {
        lock.locked(() -> lock.defer(() -> lock.locked(() -> lock.defer(note("second")))));
        assertEquals(List.of("second"), log);
    }

    @Test
    void aFailingItemDoesNotStopTheOthers() {
        lock.locked(() -> {
            lock.defer(() -> {
                throw new IllegalStateException("boom");
            });
            lock.defer(note("after"));
        });
        assertEquals(List.of("after"), log);
    }

    @Test
    void timedSectionsRunUnderTheLockOnTheTimerAndLeaveTheirWorkForAfterIt() {
        lock.later(100, () -> {
            log.add("deadline" + (Thread.holdsLock(owner) ? " (locked)" : ""));
            lock.defer(note("after deadline"));
        });
        ScheduledFuture<?> beat = lock.every(40, note("beat"));
        timer.advanceMillis(99);
        assertEquals(List.of("beat (locked)", "beat (locked)"), log);
        timer.advanceMillis(1);
        assertEquals(List.of("beat (locked)", "beat (locked)", "deadline (locked)", "after deadline"), log);
        beat.cancel(false);
        timer.advanceMillis(200);
        assertEquals(4, log.size(), "a cancelled beat beats no more, a deadline fires once");
    }

    @Test
    void aStoppedTimerTearsDownInline() {
        timer.shutdownNow();
        lock.locked(() -> lock.closeAfterUnlock(note("teardown")));
        assertEquals(List.of("teardown"), log);
        assertFalse(Thread.holdsLock(owner));
    }
}

package io.rnbd.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The adaptive window on fake time: the clock moves only when the test (or a look at the fake
 * {@code ready}) moves it, and the host's load comes from a fake /proc/loadavg. No assertion here
 * depends on how fast this machine runs.
 */
class AdaptivePollTest {
    private static final long US = 1_000;
    private static final long MAX = 50 * US;

    @TempDir
    Path dir;

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final AtomicInteger looks = new AtomicInteger();
    private Path loadavg;

    private AdaptivePoll poll(long max) throws Exception {
        loadavg = dir.resolve("loadavg");
        Files.writeString(loadavg, "0.10 0.10 0.10 1/90 1\n");
        return new AdaptivePoll(max, new SpareCpu(loadavg, 2), now::get);
    }

    /** Work that arrives {@code afterNanos} into the idle period; each look costs 1 µs of fake time. */
    private SpareCpu.Ready arrivesAfter(long afterNanos) {
        long at = now.get() + afterNanos;
        return () -> {
            looks.incrementAndGet();
            if (now.get() >= at) {
                return true;
            }
            now.addAndGet(US);
            return false;
        };
    }

    /** One idle period whose work arrives after {@code afterNanos}; true when the poll caught it. */
    private boolean idlePeriod(AdaptivePoll p, long afterNanos, int completions) throws Exception {
        long end = now.get() + afterNanos;
        boolean caught = p.idle(arrivesAfter(afterNanos));
        if (!caught) {
            now.set(Math.max(now.get(), end)); // slept in the selector until the work came
        }
        p.woke(true);
        p.served(completions);
        return caught;
    }

    @Test
    void aThreadThatHadNoWorkYetDoesNotPoll() throws Exception {
        try (AdaptivePoll p = poll(MAX)) {
            assertFalse(p.idle(arrivesAfter(5 * US)));
            assertEquals(0, looks.get(), "no look at the sockets with a closed window");
            assertEquals(0, p.polls());
            assertEquals(0, p.windowNanos());
        }
    }

    @Test
    void workThatComesBackSoonGrowsTheWindowByDoublingUpToTheMaximum() throws Exception {
        try (AdaptivePoll p = poll(MAX)) {
            long[] expected = {10 * US, 20 * US, 40 * US, MAX};
            for (long w : expected) {
                assertFalse(idlePeriod(p, 45 * US, 1), "a window under 45 us misses work that comes after 45");
                assertEquals(w, p.windowNanos());
            }
            assertTrue(idlePeriod(p, 45 * US, 1), "the 50 us window catches it");
            assertEquals(MAX, p.windowNanos());
        }
    }

    @Test
    void aPollThatCatchesTheWorkSparesTheSleepAndKeepsTheWindow() throws Exception {
        try (AdaptivePoll p = poll(MAX)) {
            for (int i = 0; i < 4; i++) {
                idlePeriod(p, 30 * US, 1);
            }
            assertEquals(40 * US, p.windowNanos());
            long polls = p.polls();
            long hits = p.hits();
            for (int i = 0; i < 100; i++) {
                assertTrue(idlePeriod(p, 30 * US, 1), "depth 1: every request caught by the poll");
            }
            assertEquals(40 * US, p.windowNanos());
            assertEquals(polls + 100, p.polls());
            assertEquals(hits + 100, p.hits());
        }
    }

    @Test
    void anIdleAppliancePollsAFewTimesAfterItsLastIoAndThenNeverAgain() throws Exception {
        try (AdaptivePoll p = poll(MAX)) {
            for (int i = 0; i < 10; i++) {
                idlePeriod(p, 30 * US, 1); // a burst of depth-1 IO
            }
            long polls = p.polls();
            long lookedFrom = looks.get();
            // then an hour of heartbeats, one every 5 s, and the IO thread's 500 ms ticks
            for (int beat = 0; beat < 720; beat++) {
                for (int tick = 0; tick < 9; tick++) {
                    p.idle(arrivesAfter(Long.MAX_VALUE / 4));
                    now.addAndGet(500_000 * US);
                    p.woke(false);
                }
                idlePeriod(p, 500_000 * US, 1);
            }
            assertEquals(0, p.windowNanos());
            assertTrue(p.polls() - polls <= 3, "the window closes within 3 idle periods: " + (p.polls() - polls));
            assertTrue(looks.get() - lookedFrom <= 50 + 25 + 13, "at most one window's worth of 1-us looks each");
        }
    }

    @Test
    void aTimeoutShrinksTheWindow() throws Exception {
        try (AdaptivePoll p = poll(MAX)) {
            for (int i = 0; i < 5; i++) {
                idlePeriod(p, 45 * US, 1);
            }
            assertEquals(MAX, p.windowNanos());
            p.idle(arrivesAfter(Long.MAX_VALUE / 4));
            p.woke(false); // the selector's tick, nothing arrived, even if soon
            assertEquals(25 * US, p.windowNanos());
            p.idle(arrivesAfter(Long.MAX_VALUE / 4));
            p.woke(false);
            assertEquals(12_500, p.windowNanos());
            p.idle(arrivesAfter(Long.MAX_VALUE / 4));
            p.woke(false);
            assertEquals(0, p.windowNanos(), "under the 10 us start the window closes");
        }
    }

    @Test
    void denseWakesKeepTheWindowNearlyClosed() throws Exception {
        try (AdaptivePoll p = poll(MAX)) {
            for (int i = 0; i < 5; i++) {
                idlePeriod(p, 45 * US, 1);
            }
            assertEquals(MAX, p.windowNanos());
            idlePeriod(p, 3 * US, 2);
            assertEquals(MAX, p.windowNanos(), "two completions in a wake are not a batch yet");
            // depth 32: short idle periods, each wake bringing a batch
            long looked = looks.get();
            for (int i = 0; i < 1000; i++) {
                idlePeriod(p, 3 * US, 8);
                assertTrue(p.windowNanos() <= 25 * US);
            }
            assertTrue(p.windowNanos() <= AdaptivePoll.GROW_START_NANOS, "after the batches: " + p.windowNanos());
            // three polls (4 looks each) close the window; after that the thread sleeps between batches
            assertTrue(looks.get() - looked <= 12, "looks during the dense load: " + (looks.get() - looked));
        }
    }

    @Test
    void aBusyHostGetsNoPollButTheWindowStillLearns() throws Exception {
        try (AdaptivePoll p = poll(MAX)) {
            for (int i = 0; i < 5; i++) {
                idlePeriod(p, 45 * US, 1);
            }
            Files.writeString(loadavg, "9.00 9.00 9.00 5/400 1\n"); // 5 runnable on 2 CPUs
            int looked = looks.get();
            assertFalse(idlePeriod(p, 30 * US, 1));
            assertEquals(looked, looks.get(), "no look while no CPU is spare");
            assertEquals(1, p.skipped());
            assertEquals(MAX, p.windowNanos());
            Files.writeString(loadavg, "9.00 9.00 9.00 2/400 1\n");
            assertTrue(idlePeriod(p, 30 * US, 1), "polls again once a CPU is spare");
        }
    }

    @Test
    void aCallerThatFindsPollingNotWorthItSleepsAtOnce() throws Exception {
        try (AdaptivePoll p = poll(MAX)) {
            for (int i = 0; i < 5; i++) {
                idlePeriod(p, 45 * US, 1);
            }
            long polls = p.polls();
            assertFalse(p.idle(arrivesAfter(0), false));
            assertEquals(polls, p.polls());
            assertEquals(0, p.skipped(), "not a busy host");
        }
    }

    @Test
    void aPollGivesWayWhenAYieldKeptTheThreadOffTheCpu() throws Exception {
        try (AdaptivePoll p = poll(MAX)) {
            for (int i = 0; i < 5; i++) {
                idlePeriod(p, 45 * US, 1);
            }
            int looked = looks.get();
            // each look finds the clock 30 us further: another thread had the CPU meanwhile
            assertFalse(p.idle(() -> {
                looks.incrementAndGet();
                now.addAndGet(30 * US);
                return false;
            }));
            assertEquals(looked + 1, looks.get());
        }
    }

    @Test
    void aZeroMaximumNeverPollsAndNeedsNoProbe() throws Exception {
        AdaptivePoll p = new AdaptivePoll(0, null, now::get);
        for (int i = 0; i < 10; i++) {
            idlePeriod(p, 5 * US, 1);
        }
        assertEquals(0, p.windowNanos());
        assertEquals(0, looks.get());
        assertEquals(0, AdaptivePoll.never().maxNanos());
        assertThrows(IllegalArgumentException.class, () -> new AdaptivePoll(MAX, null, now::get));
        assertThrows(IllegalArgumentException.class, () -> new AdaptivePoll(-1, null, now::get));
    }

    @Test
    void aFixedWindowPollsItsWholeLengthEveryTime() throws Exception {
        Files.writeString(dir.resolve("la"), "0 0 0 1/9 1\n");
        try (AdaptivePoll p = AdaptivePoll.fixed(20 * US, new SpareCpu(dir.resolve("la"), 2), now::get)) {
            assertEquals(20 * US, p.windowNanos(), "open from the start");
            for (int i = 0; i < 3; i++) {
                idlePeriod(p, 1_000_000 * US, 9);
                p.idle(arrivesAfter(Long.MAX_VALUE / 4));
                p.woke(false);
            }
            assertEquals(20 * US, p.windowNanos(), "long idle periods, timeouts and batches change nothing");
            assertEquals(6, p.polls());
            assertEquals(6 * 20, looks.get());
        }
    }

    @Test
    void closeReleasesTheProbe() throws Exception {
        Files.writeString(dir.resolve("la"), "0 0 0 1/9 1\n");
        SpareCpu probe = new SpareCpu(dir.resolve("la"), 2);
        new AdaptivePoll(MAX, probe, now::get).close();
        assertFalse(probe.isOpen());
    }

    /**
     * At most the process's limit of threads poll at once: on two CPUs one, so that the thread a
     * depth-1 IO wakes next has the other CPU and never waits behind two pollers yielding.
     */
    @Test
    void aProcessPollsOnAtMostItsLimitOfThreadsAtOnce() throws Exception {
        poll(MAX);
        SpareCpu.Share slots = new SpareCpu.Share();
        AdaptivePoll first = AdaptivePoll.fixed(MAX, new SpareCpu(loadavg, 2, slots, 1, 0, now::get), now::get);
        AdaptivePoll second = AdaptivePoll.fixed(MAX, new SpareCpu(loadavg, 2, slots, 1, 0, now::get), now::get);
        boolean[] secondPolledInside = {true};
        assertTrue(first.idle(() -> {
            secondPolledInside[0] = second.idle(() -> true);
            return true;
        }));
        assertFalse(secondPolledInside[0], "a second poller while the first polls");
        assertEquals(1, second.skipped());
        assertEquals(0, second.polls());
        assertEquals(0, slots.pollers(), "the first poll gave its slot back");
        assertTrue(second.idle(() -> true), "alone, it polls");
        assertEquals(0, slots.pollers());
    }
}

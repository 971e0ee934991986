package io.rnbd.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The one busy poll, where it does not depend on the scheduler (how long a yield keeps the
 * poller away is the machine's, and ends a poll early by design): a ready look ends it at
 * once, a poll of no length looks once, and one where nothing is ever ready gives up.
 */
class SpareCpuSpinTest {
    @Test
    void aReadyLookEndsThePollAtOnce() throws Exception {
        AtomicInteger looks = new AtomicInteger();
        assertTrue(SpareCpu.spin(10_000_000_000L, () -> looks.incrementAndGet() > 0));
        assertEquals(1, looks.get());
    }

    @Test
    void aZeroLengthPollLooksOnceAndANeverReadyOneGivesUp() throws Exception {
        AtomicInteger looks = new AtomicInteger();
        assertFalse(SpareCpu.spin(0, () -> looks.incrementAndGet() < 0));
        assertEquals(1, looks.get());
        assertFalse(SpareCpu.spin(1_000_000, () -> false), "1 ms of nothing ready");
    }
}

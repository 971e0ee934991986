package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Errno;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReconnectPolicyTest {
    record Row(int max, int status, int attempts, boolean expect) {
    }

    @Test
    void shouldReconnectTable() {
        Row[] rows = {
            new Row(-1, Errno.ECONNREFUSED, 1, true),
            new Row(-1, Errno.ECONNREFUSED, 100_000, true),
            new Row(-1, Errno.ETIMEDOUT, 3, true),
            new Row(-1, Errno.EBUSY, 1, true),
            new Row(-1, Errno.ENODEV, 1, true),
            new Row(-1, Errno.ENOKEY, 1, false),
            new Row(-1, Errno.EKEYREJECTED, 1, false),
            new Row(-1, Errno.EINVAL | ReconnectPolicy.DNR, 1, false),
            new Row(-1, Errno.ECONNREFUSED | ReconnectPolicy.DNR, 1, false),
            new Row(3, Errno.ECONNREFUSED, 2, true),
            new Row(3, Errno.ECONNREFUSED, 3, false),
            new Row(3, Errno.ECONNREFUSED, 4, false),
            new Row(0, Errno.ECONNREFUSED, 1, false),
            new Row(3, Errno.EKEYREJECTED, 0, false),
        };
        for (Row r : rows) {
            ReconnectPolicy p = new ReconnectPolicy(r.max, 10_000, 1000, 1);
            assertEquals(r.expect, p.shouldReconnect(r.status, r.attempts), r.toString());
        }
    }

    @Test
    void baseDelayAddsOneBackoffPerAttempt() {
        ReconnectPolicy p = new ReconnectPolicy(-1, 10_000, 1000, 1);
        assertEquals(10_000, p.baseDelayMs(1));
        assertEquals(11_000, p.baseDelayMs(2));
        assertEquals(19_000, p.baseDelayMs(10));
    }

    @Test
    void backoffIsCappedAtAMinute() {
        ReconnectPolicy p = new ReconnectPolicy(-1, 10_000, 1000, 1);
        assertEquals(60_000, p.baseDelayMs(51));
        assertEquals(60_000, p.baseDelayMs(5000), "not 5 009 s after a long outage");
        assertEquals(59_000, p.baseDelayMs(50));
        ReconnectPolicy slow = new ReconnectPolicy(-1, 120_000, 1000, 1);
        assertEquals(120_000, slow.baseDelayMs(30), "a configured delay above the cap is kept");
        for (int i = 0; i < 100; i++) {
            assertTrue(p.delayMs(10_000) <= 90_000, "jitter stays within ±50 % of the cap");
        }
    }

    @Test
    void jitterSpreadsOverPlusMinusHalfAndDependsOnTheSeed() {
        ReconnectPolicy p = new ReconnectPolicy(-1, 10_000, 1000, 7);
        long min = Long.MAX_VALUE;
        long max = 0;
        for (int i = 0; i < 10_000; i++) {
            long d = p.delayMs(1);
            assertTrue(d >= 5000 && d <= 15_000, "delay " + d);
            min = Math.min(min, d);
            max = Math.max(max, d);
        }
        assertTrue(min < 5500 && max > 14_500, "spread over seconds, not milliseconds: " + min + ".." + max);
        long a = new ReconnectPolicy(-1, 10_000, 1000, 1).delayMs(1);
        long b = new ReconnectPolicy(-1, 10_000, 1000, 2).delayMs(1);
        assertNotEquals(a, b, "two sessions do not reconnect in lockstep");
        assertEquals(new ReconnectPolicy(-1, 10_000, 1000, 3).delayMs(4),
                new ReconnectPolicy(-1, 10_000, 1000, 3).delayMs(4), "reproducible per seed");
        assertEquals(0, new ReconnectPolicy(-1, 0, 0, 3).delayMs(1));
    }

    @Test
    void maxAttemptsRange() {
        ReconnectPolicy p = new ReconnectPolicy(-1, 0, 0, 1);
        assertThrows(IllegalArgumentException.class, () -> p.maxAttempts(-2));
        assertThrows(IllegalArgumentException.class, () -> p.maxAttempts(10_000));
        p.maxAttempts(9999);
        assertEquals(9999, p.maxAttempts());
    }
}

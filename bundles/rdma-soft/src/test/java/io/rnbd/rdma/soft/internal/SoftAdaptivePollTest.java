package io.rnbd.rdma.soft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.AdaptivePoll;
import io.rnbd.common.SpareCpu;
import io.rnbd.testkit.Await;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The IO thread tells its adaptive busy poll when it goes idle and when it wakes, so the window
 * follows the traffic. Time is the poll's own fake clock, which moves by a set step each time the
 * IO thread reads it: a step of 1 us makes every idle period short (work comes back at once), a
 * step of 1 s makes every one long. How the window moves on such periods is AdaptivePollTest's;
 * this is the wiring. One thing stays real time: an IO thread that sleeps through its selector's
 * tick (500 ms) without work takes that as "work stopped" and shrinks the window, which a test
 * thread kept off the CPU that long on a loaded machine causes; so work is handed over until the
 * window opens, not a fixed number of times.
 */
class SoftAdaptivePollTest {
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final AtomicLong step = new AtomicLong();

    private SoftDevice device(String name) throws Exception {
        // a probe that cannot read /proc/loadavg says a CPU is spare: the window alone decides
        return new SoftDevice(name, InetAddress.getByName("127.0.0.1"), 1, SoftDevice.DEFAULT_POLL_USEC,
                n -> new AdaptivePoll(n, new SpareCpu(Path.of("/nonexistent/loadavg"), 1), () -> now.addAndGet(step.get())));
    }

    @Test
    void aDeviceWhoseWorkComesSeldomNeverPolls() throws Exception {
        step.set(1_000_000_000L);
        try (SoftDevice d = device("seldom")) {
            for (int i = 0; i < 20; i++) {
                d.reactor().executeAndWait(() -> { });
            }
            assertEquals(0, d.pollWindows()[0]);
            assertEquals(0, d.pollCounts()[0], "no poll");
        }
    }

    @Test
    void theWindowOpensWhileWorkComesBackSoonAndClosesWhenItStops() throws Exception {
        step.set(1_000);
        try (SoftDevice d = device("soon")) {
            Await.until(() -> "polls begin (window " + d.pollWindows()[0] + ")", () -> {
                d.reactor().executeAndWait(() -> { });
                return d.pollCounts()[0] > 0;
            }, Duration.ofSeconds(30));
            assertTrue(d.pollWindows()[0] > 0 && d.pollWindows()[0] <= 50_000, "window " + d.pollWindows()[0]);
            step.set(1_000_000_000L); // from now on every idle period is long: the work stopped
            d.reactor().executeAndWait(() -> { });
            Await.until("the window closes", () -> d.pollWindows()[0] == 0, Duration.ofSeconds(30));
            long polls = d.pollCounts()[0];
            for (int i = 0; i < 20; i++) {
                d.reactor().executeAndWait(() -> { });
            }
            assertEquals(polls, d.pollCounts()[0], "a closed window stays closed while the work stays seldom");
        }
    }

    @Test
    void pollTimeZeroNeverPolls() throws Exception {
        step.set(1_000);
        try (SoftDevice d = new SoftDevice("off", InetAddress.getByName("127.0.0.1"), 1, 0)) {
            for (int i = 0; i < 20; i++) {
                d.reactor().executeAndWait(() -> { });
            }
            assertEquals(0, d.pollWindows()[0]);
            assertEquals(0, d.pollCounts()[0]);
        }
    }
}

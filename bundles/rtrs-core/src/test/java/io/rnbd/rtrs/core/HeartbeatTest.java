package io.rnbd.rtrs.core;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rtrs.proto.Imm;
import io.rnbd.testkit.FakeScheduler;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The shared heartbeat on fake time, against a path that records what it was asked to do. */
class HeartbeatTest {
    private final FakeScheduler timer = new FakeScheduler();
    private final List<Integer> sent = new ArrayList<>();
    private final List<String> failures = new ArrayList<>();
    private boolean connected = true;
    private boolean sendFails;

    private final Heartbeat.Path path = new Heartbeat.Path() {
        @Override
        public boolean connected() {
            return connected;
        }

        @Override
        public void writeImmEmpty(int imm) throws RdmaException {
            if (sendFails) {
                throw new RdmaException(Errno.ENOTCONN, "down");
            }
            sent.add(imm);
        }

        @Override
        public void fail(int errno, String why) {
            failures.add(Errno.name(errno) + ": " + why);
            connected = false;
        }
    };

    private final Heartbeat.Clock clock = new Heartbeat.Clock() {
        @Override
        public ScheduledFuture<?> every(long periodMs, Runnable underLock) {
            return timer.scheduleAtFixedRate(underLock, periodMs, periodMs, TimeUnit.MILLISECONDS);
        }

        @Override
        public long nanoTime() {
            return timer.nanoTime();
        }
    };

    private final Heartbeat hb = new Heartbeat(path, clock, 1000, 3);

    @Test
    void aSilentPeerFailsThePathAfterMissedMaxBeats() {
        hb.start();
        for (int i = 1; i <= 3; i++) {
            timer.advanceMillis(1000);
            assertEquals(i, sent.size());
            assertTrue(failures.isEmpty(), "after " + i + " beats");
        }
        assertEquals(Imm.hbMsg(), (int) sent.get(0));
        timer.advanceMillis(1000);
        assertEquals(List.of("ETIMEDOUT: missed 3 heartbeats"), failures);
        assertEquals(3, sent.size(), "no fourth beat");
    }

    @Test
    void anythingHeardResetsTheCount() {
        hb.start();
        for (int i = 0; i < 10; i++) {
            timer.advanceMillis(1000);
            hb.heard();
        }
        assertTrue(failures.isEmpty());
        assertEquals(10, sent.size());
    }

    @Test
    void theRoundTripIsMeasuredOnTheSessionsClock() {
        hb.start();
        timer.advanceMillis(1000);
        timer.advanceMillis(7); // the ack comes 7 ms after the beat
        hb.acked();
        assertEquals(TimeUnit.MILLISECONDS.toNanos(7), hb.rttNanos());
    }

    @Test
    void theOtherSidesBeatIsAcknowledged() throws RdmaException {
        hb.ack();
        assertEquals(List.of(Imm.hbAck()), sent);
    }

    @Test
    void aPathNotConnectedIsNotBeatenAndAFailedSendFailsIt() {
        hb.start();
        connected = false;
        timer.advanceMillis(5000);
        assertTrue(sent.isEmpty() && failures.isEmpty());
        connected = true;
        sendFails = true;
        timer.advanceMillis(1000);
        assertEquals(List.of("ENOTCONN: heartbeat send failed"), failures);
    }

    @Test
    void stopEndsTheBeat() {
        hb.start();
        hb.stop();
        timer.advanceMillis(10_000);
        assertTrue(sent.isEmpty());
        assertEquals(0, timer.pending());
    }
}

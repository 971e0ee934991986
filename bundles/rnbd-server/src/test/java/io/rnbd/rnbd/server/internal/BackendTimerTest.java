package io.rnbd.rnbd.server.internal;

import static io.rnbd.rnbd.server.internal.Wire.readNow;
import static io.rnbd.rnbd.server.internal.Wire.writeNow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.proto.Io;
import io.rnbd.rnbd.proto.Open;
import io.rnbd.rnbd.proto.OpenRsp;
import io.rnbd.testkit.block.FakeBackend;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Every request a backend does not finish at once arms a backend.timeout.ms timer that its
 * completion cancels. On the scheduler the server is meant to run on, a cancelled timer
 * leaves the queue at once: at 10 K IOPS and 25 s, a plain scheduler held a quarter of a
 * million dead timers, each schedule sifting through them.
 */
class BackendTimerTest {
    @Test
    void answeredRequestsLeaveNoTimerBehind() throws Exception {
        ScheduledExecutorService timer = RnbdServer.newScheduler("rnbd-timer-test");
        ExecutorService backendThread = Executors.newSingleThreadExecutor();
        RnbdServer server = new RnbdServer(timer);
        try (FakeRtrs rtrs = new FakeRtrs(server)) {
            FakeBackend backend = new FakeBackend(64 * 1024);
            server.backendAdded("memory", backend);
            server.addExport(new ExportConfig("disk", "memory", false, Set.of(), 0,
                    Map.of("id", "disk", "size", "" + (1 << 20))));
            backend.device("disk").completingOn(backendThread); // later than the call: a timer is armed
            FakeRtrs.Client c = rtrs.connect("s1");
            ByteBuffer rsp = ByteBuffer.allocate(OpenRsp.SIZE);
            assertEquals(0, readNow(c, new Open(AccessMode.RW, "disk"), rsp));
            int dev = OpenRsp.decode(rsp).deviceId();
            for (int i = 0; i < 2000; i++) {
                assertEquals(0, writeNow(c, Io.of(dev, (i % 256) * 8L, Io.OP_WRITE, 0, 4096),
                        ByteBuffer.allocate(4096)));
            }
            int queued = ((ScheduledThreadPoolExecutor) timer).getQueue().size();
            assertTrue(queued < 10, queued + " timers queued after 2000 answered requests");
        } finally {
            server.close();
            backendThread.shutdownNow();
            timer.shutdownNow();
            timer.awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}

package io.rnbd.rtrs.server.internal;

import io.rnbd.rdma.api.CmEvent;
import io.rnbd.common.Errno;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.api.RtrsServerRequest;
import io.rnbd.rtrs.api.RtrsServerSession;
import io.rnbd.rtrs.api.RtrsServerSessionInfo;
import io.rnbd.rtrs.proto.ConRsp;
import io.rnbd.rtrs.proto.Imm;
import io.rnbd.rtrs.proto.SgDesc;
import io.rnbd.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Sessions by UUID: EBUSY while an old path instance drains, force-close, admin snapshots. */
class SessionLifecycleTest {
    static final int QD = 4;
    SoftDevice dev;
    ScheduledExecutorService timer;
    RtrsServer server;
    final ConcurrentLinkedQueue<RtrsServerRequest> held = new ConcurrentLinkedQueue<>();
    final List<String> events = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        dev = new SoftDevice("soft-l", InetAddress.getByName("127.0.0.1"));
        timer = Executors.newSingleThreadScheduledExecutor();
        RtrsServerOps ops = new RtrsServerOps() {
            @Override
            public void onRequest(RtrsServerRequest r) {
                held.add(r);
            }

            @Override
            public void onSessionConnected(RtrsServerSession s) {
                events.add("up " + s.name());
            }

            @Override
            public void onSessionClosed(RtrsServerSession s) {
                events.add("down " + s.name());
            }
        };
        server = new RtrsServer(new ServerConfig(0, 8192, QD, false, 60_000, 5), () -> ops, () -> null, timer,
                System::nanoTime);
        server.add(dev);
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
        timer.shutdownNow();
        timer.awaitTermination(5, TimeUnit.SECONDS);
        dev.close();
    }

    InetSocketAddress addr() {
        return server.listenAddresses(dev).get(0);
    }

    static void sendWrite(RawClient c, int buf) throws Exception {
        SgDesc d = c.info.descs().get(buf);
        byte[] msg = HostileClientTest.writeMsg(new byte[16], 1, 8);
        c.cons[1].writeImm(msg, d.addr(), d.key(), Imm.ioReq(buf, 24, Imm.offsetBits(QD)));
    }

    @Test
    void reconnectWhileTheOldInstanceDrainsIsRefusedWithEbusy() throws Exception {
        try (RawClient first = new RawClient(dev).connect(addr(), 2, "s1")) {
            sendWrite(first, 0);
            Await.until("request in the upper layer", () -> !held.isEmpty());
            // the same path reconnects (new recon_cnt) while its request is still running
            try (RawClient again = new RawClient(dev, first.sess, first.path)) {
                again.reconCnt = 2;
                ConRsp busy = again.hello(addr(), 2);
                assertEquals(Errno.EBUSY, busy.errno());
                assertFalse(busy.has(ConRsp.DNR_F), "EBUSY is worth retrying");
            }
            assertEquals(CmEvent.Type.DISCONNECTED, first.cons[0].event().type(), "old instance closed");
            held.poll().complete(0); // the old instance drains...
            Await.until("old instance gone", () -> server.sessions().isEmpty());
            try (RawClient again = new RawClient(dev, first.sess, first.path)) {
                again.reconCnt = 2;
                again.connect(addr(), 2, "s1"); // ...and now the path is welcome again
                assertEquals(QD, again.info.descs().size());
            }
        }
    }

    @Test
    void forceCloseDropsOnlyThatSessionAndAdminShowsThePaths() throws Exception {
        try (RawClient a = new RawClient(dev).connect(addr(), 2, "a");
             RawClient b = new RawClient(dev).connect(addr(), 3, "b")) {
            Await.until("both announced", () -> events.containsAll(List.of("up a", "up b")));
            RtrsServerSessionInfo info = server.sessions().stream().filter(s -> s.name().equals("b")).findFirst()
                    .orElseThrow();
            assertEquals(1, info.paths().size());
            assertEquals(3, info.paths().get(0).connections());
            // host:port as the console documents it, not InetSocketAddress's "/host:port"
            assertTrue(info.paths().get(0).localAddress().matches("\\d+\\.\\d+\\.\\d+\\.\\d+:\\d+"),
                    info.paths().get(0).localAddress());
            assertTrue(info.paths().get(0).remoteAddress().matches("\\d+\\.\\d+\\.\\d+\\.\\d+:\\d+"),
                    info.paths().get(0).remoteAddress());
            assertEquals(QD, info.queueDepth());
            assertTrue(server.closeSession("a"));
            assertFalse(server.closeSession("nope"));
            assertEquals(CmEvent.Type.DISCONNECTED, a.cons[0].event().type());
            Await.until("a gone", () -> events.contains("down a"));
            sendWrite(b, 2);
            Await.until("b still served", () -> !held.isEmpty());
            held.poll().complete(0);
            assertEquals(2, Imm.rspMsgId(b.cons[1].recv().imm()));
            assertEquals(1, server.sessions().size());
        }
    }

    /**
     * The server stops (its bundle does) while the upper layer still holds a request: the
     * path cannot leave until that request is answered, by when the timer is gone with the
     * bundle. The close reaches the upper layer anyway, once, before close() returns, and the
     * session says it is closed; otherwise the upper layer would hold the session's opens
     * forever (the next session of the client: EBUSY).
     */
    @Test
    void closingTheServerAnnouncesEverySessionCloseOnceEvenWithARequestStillHeld() throws Exception {
        try (RawClient c = new RawClient(dev).connect(addr(), 2, "s1")) {
            sendWrite(c, 0);
            Await.until("request in the upper layer", () -> !held.isEmpty());
            Await.until("announced", () -> events.contains("up s1"));
            RtrsServerSession session = held.peek().session();
            assertFalse(session.closed());
            server.close();
            assertEquals(List.of("up s1", "down s1"), events, "announced by close() itself");
            assertTrue(session.closed());
            timer.shutdownNow();
            held.poll().complete(Errno.ENODEV); // the upper layer answers late; the path leaves now
            assertEquals(List.of("up s1", "down s1"), events, "announced once");
        }
    }

    /**
     * CI's SwapIT: an idle session's paths leave as close() removes the devices, and their
     * close is handed to the timer, which the bundle shuts down right after close() (dropping
     * what it queued). close() must have told the upper layer itself, once.
     */
    @Test
    void aCloseQueuedOnTheTimerIsToldByCloseItselfOnce() throws Exception {
        try (RawClient c = new RawClient(dev).connect(addr(), 2, "s1")) {
            Await.until("announced", () -> events.contains("up s1"));
            CountDownLatch busy = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            timer.execute(() -> {
                busy.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            busy.await();
            server.close();
            assertEquals(List.of("up s1", "down s1"), events, "told by close() while the timer was busy");
            timer.shutdownNow(); // what the bundle does next: the queued task is dropped or interrupted
            release.countDown();
            timer.awaitTermination(5, TimeUnit.SECONDS);
            assertEquals(List.of("up s1", "down s1"), events, "told once");
        }
    }
}

package io.rnbd.rtrs.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.proto.ConRsp;
import io.rnbd.testkit.Await;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 35 e: queue.depth (or chunk.size) changed under clients. Linux's client refuses a
 * session whose queue depth changed between reconnects and stops reconnecting for good
 * (rtrs_rdma_conn_established, "queue depth changed"), so the server gives a session it has
 * seen the limits it had, whether it is connected, coming back after all its paths went, or
 * coming back to a server rebuilt with the same {@link SessionLimits}; new sessions get the
 * new limits.
 */
class QueueDepthChangeTest {
    static final int CHUNK = 16384;

    SoftDevice dev;
    SoftDevice dev2;
    ScheduledExecutorService timer;
    final SessionLimits limits = new SessionLimits();
    RtrsServer server;

    RtrsServer server(int queueDepth) {
        return new RtrsServer(new ServerConfig(0, CHUNK, queueDepth, false, 60_000, 5), () -> r -> r.complete(0),
                () -> null, timer, System::nanoTime, limits);
    }

    @BeforeEach
    void start() throws Exception {
        dev = new SoftDevice("soft-qd", InetAddress.getByName("127.0.0.1"));
        dev2 = new SoftDevice("soft-qd2", InetAddress.getByName("127.0.0.2"));
        timer = Executors.newSingleThreadScheduledExecutor();
        server = server(4);
        server.add(dev);
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
        timer.shutdownNow();
        timer.awaitTermination(5, TimeUnit.SECONDS);
        dev2.close();
        dev.close();
    }

    InetSocketAddress addr() {
        return server.listenAddresses(dev).get(0);
    }

    @Test
    void aSessionKeepsItsQueueDepthNewSessionsGetTheNewOne() throws Exception {
        RawClient s = new RawClient(dev).connect(addr(), 2, "s");
        assertEquals(4, s.conRsp.queueDepth());
        server.newSessionLimits(8, 2 * CHUNK);
        try (RawClient t = new RawClient(dev2).connect(addr(), 2, "t")) {
            assertEquals(8, t.conRsp.queueDepth(), "a new session");
            assertEquals(2 * CHUNK - 4096, t.conRsp.maxIoSize());
            assertEquals(8, t.info.descs().size());
        }
        try (RawClient second = new RawClient(dev2, s.sess, UUID.randomUUID()).connect(addr(), 2, "s")) {
            assertEquals(4, second.conRsp.queueDepth(), "a second path of a connected session");
            assertEquals(CHUNK - 4096, second.conRsp.maxIoSize());
        }
        UUID path = s.path;
        s.close();
        Await.until("session s gone", () -> server.session("s").isEmpty());
        try (RawClient back = new RawClient(dev, s.sess, path)) {
            back.reconCnt = 2;
            back.connect(addr(), 2, "s");
            assertEquals(4, back.conRsp.queueDepth(), "the session comes back after all its paths went");
            assertEquals(4, back.info.descs().size());
        }
    }

    @Test
    void aServerRebuiltWithTheSameMemoryGivesAReturningSessionItsLimits() throws Exception {
        RawClient s = new RawClient(dev).connect(addr(), 2, "s");
        UUID path = s.path;
        server.close(); // the component rebuilding its server for another setting: every path drops
        s.close();
        server = server(16);
        server.add(dev);
        try (RawClient back = new RawClient(dev, s.sess, path)) {
            back.reconCnt = 2;
            ConRsp rsp = back.connect(addr(), 2, "s").conRsp;
            assertEquals(4, rsp.queueDepth());
        }
        try (RawClient fresh = new RawClient(dev2).connect(addr(), 2, "u")) {
            assertEquals(16, fresh.conRsp.queueDepth());
        }
    }
}

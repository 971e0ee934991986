package io.rnbd.rtrs.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.common.Errno;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.api.RtrsServerOps;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A request is answered once, and the transport is the one place that guards it
 * ({@code ServerRequest.complete}): the first answer goes to the client, a later one (an upper
 * layer that answers twice, or fails after it answered and has the handoff answer EIO) is
 * dropped. A second answer that got through would reach the client as a second IO_RSP of the
 * same chunk, before the answer of the next request, and leave the path's count of requests in
 * flight below zero.
 */
class AnsweredOnceTest {
    /** HostileClientTest's, whose IO helper this test uses. */
    static final int QD = HostileClientTest.QD;
    static final int CHUNK = 16384;

    SoftDevice dev;
    ScheduledExecutorService timer;
    RtrsServer server;
    volatile RtrsServerOps upper;

    @BeforeEach
    void start() throws Exception {
        dev = new SoftDevice("soft-once", InetAddress.getByName("127.0.0.1"));
        timer = Executors.newSingleThreadScheduledExecutor();
        server = new RtrsServer(new ServerConfig(0, CHUNK, QD, false, 60_000, 5), () -> upper, () -> null, timer,
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

    /** A 512-byte write into chunk {@code buf}; the errno of the next IO_RSP, which must be its (the message id checked). */
    static int io(RawClient c, int buf) throws Exception {
        return HostileClientTest.io(c, buf, HostileClientTest.writeMsg(new byte[512], 0, 8), 512 + 8);
    }

    /** The first request is answered as {@link #upper} does; the next one (ENOSPC) shows no second answer came. */
    void answeredOnce(String name, int firstErrno) throws Exception {
        try (RawClient c = new RawClient(dev).connect(addr(), 2, name)) {
            assertEquals(firstErrno, io(c, 0));
            upper = r -> r.complete(Errno.ENOSPC);
            assertEquals(Errno.ENOSPC, io(c, 1), "the next IO_RSP is the next request's: none came twice");
            assertEquals(Errno.ENOSPC, io(c, 0), "the first chunk serves again");
            assertEquals(0, server.sessions().get(0).paths().get(0).inflight(), "nothing in flight");
        }
    }

    @Test
    void aSecondAnswerIsDropped() throws Exception {
        upper = r -> {
            r.complete(0);
            r.complete(Errno.EIO);
        };
        answeredOnce("twice", 0);
    }

    @Test
    void anUpperLayerThatFailsAfterItAnsweredKeepsItsAnswer() throws Exception {
        upper = r -> {
            r.complete(0);
            throw new IllegalStateException("failed after the answer");
        };
        answeredOnce("late-failure", 0);
    }

    @Test
    void anUpperLayerThatFailsBeforeItAnsweredIsAnsweredEio() throws Exception {
        upper = r -> {
            throw new IllegalStateException("failed before the answer");
        };
        answeredOnce("early-failure", Errno.EIO);
    }
}

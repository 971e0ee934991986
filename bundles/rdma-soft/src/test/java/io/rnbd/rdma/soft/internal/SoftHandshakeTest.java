package io.rnbd.rdma.soft.internal;


import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RecvWr;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WcStatus;
import io.rnbd.testkit.Await;
import io.rnbd.testkit.rdma.Endpoint;
import io.rnbd.testkit.LogCapture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Hostile clients on raw sockets against the passive side's handshake limits: connections
 * that never send their HELLO are closed at the deadline (on fake time), and one source
 * cannot hold more than its share of half-open connections; honest peers are unaffected.
 */
class SoftHandshakeTest {
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final List<Socket> sockets = new ArrayList<>();
    private SoftDevice server;
    private SoftDevice client;
    /**
     * When set: the first read of the clock that finds a connection from this source counted as
     * half-open moves time by {@link #jumpNanos} first, as a test (or an operator's clock) might
     * the moment it sees the connection counted.
     */
    private volatile InetAddress jumpWhenCounted;
    private volatile long jumpNanos;

    private long clock() {
        InetAddress src = jumpWhenCounted;
        SoftDevice s = server;
        if (src != null && s != null && s.handshakes().halfOpen(src) > 0) {
            jumpWhenCounted = null;
            now.addAndGet(jumpNanos);
        }
        return now.get();
    }

    private void open(long timeoutMs, int perSource) throws Exception {
        server = new SoftDevice("hs", InetAddress.getByName("127.0.0.1"), 1, 0, SoftDevice::adaptivePoll,
                new SoftDevice.Handshake(timeoutMs, perSource), this::clock);
        client = new SoftDevice("hc", InetAddress.getByName("127.0.0.4"));
    }

    @AfterEach
    void close() throws IOException {
        for (Socket s : sockets) {
            s.close();
        }
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private CmListener listen(Endpoint ep) throws RdmaException {
        ProtectionDomain pd = server.allocPd();
        MemoryRegion rbuf = pd.register(ByteBuffer.allocateDirect(4096), Access.all());
        return server.listen(new InetSocketAddress(server.address(), 0), req -> {
            try {
                QueuePair qp = req.accept(new QpInit(pd, 16, 16, 1, ep), ep);
                qp.postRecv(new RecvWr(1, List.of(new Sge(rbuf, 0, 4096))));
            } catch (RdmaException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** A TCP connection from {@code source} that says nothing. */
    private Socket silent(CmListener l, String source) throws IOException {
        Socket s = new Socket();
        sockets.add(s);
        s.bind(new InetSocketAddress(source, 0));
        s.connect(l.localAddress());
        return s;
    }

    private static boolean closedByPeer(Socket s, int waitMs) throws IOException {
        s.setSoTimeout(waitMs);
        try {
            return s.getInputStream().read() < 0;
        } catch (SocketTimeoutException stillOpen) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    private void assertServes(CmListener l, Endpoint ep) throws Exception {
        ProtectionDomain cpd = client.allocPd();
        Endpoint c = new Endpoint("client");
        QueuePair qp = client.connect(l.localAddress(), new QpInit(cpd, 8, 8, 1, c), null, c);
        c.nextEvent(CmEvent.Type.ESTABLISHED);
        MemoryRegion m = cpd.register(ByteBuffer.allocateDirect(64), Access.all());
        qp.postSend(SendWr.send(1, List.of(new Sge(m, 0, 10))));
        c.nextWc(WcStatus.SUCCESS);
        assertEquals(10, ep.nextWc(WcStatus.SUCCESS).byteLen());
        qp.close();
    }

    @Test
    void connectionsWithoutHelloAreClosedAtTheDeadline() throws Exception {
        open(10_000, 64);
        Endpoint ep = new Endpoint("server");
        CmListener l = listen(ep);
        InetAddress src = InetAddress.getByName("127.0.0.2");
        List<Socket> silent = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            silent.add(silent(l, "127.0.0.2"));
        }
        Await.until("20 half-open connections", () -> server.handshakes().halfOpen(src) == 20);
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(9_900));
        assertTrue(!closedByPeer(silent.get(0), 1200), "closed before the deadline");
        try (LogCapture log = LogCapture.start()) {
            now.addAndGet(TimeUnit.MILLISECONDS.toNanos(200));
            for (Socket s : silent) {
                assertTrue(closedByPeer(s, 5000), "still open after the deadline");
            }
            assertTrue(log.contains("no connect request within 10000 ms (handshake.timeout.ms)"), log.text());
        }
        Await.until("no half-open connection left", () -> server.handshakes().halfOpen(src) == 0);
        assertEquals(20L, server.counters().get("handshakes_timed_out"));
        // an honest peer is served, and the deadline never touches an established connection
        assertServes(l, ep);
        now.addAndGet(TimeUnit.SECONDS.toNanos(3600));
        Thread.sleep(700);
        assertServes(l, ep);
    }

    /**
     * The deadline runs from the accept and is fixed before the connection counts as half-open:
     * time moved by someone who saw it counted (this test's other case, the flake it once was)
     * cannot push the deadline back. Here the clock itself moves past the deadline at its first
     * read that finds the connection counted: a deadline read after the count would start from
     * the moved time and lie 10 s ahead; read before, it has passed, and the next tick closes it.
     */
    @Test
    void theHelloDeadlineIsFixedBeforeTheConnectionCounts() throws Exception {
        InetAddress src = InetAddress.getByName("127.0.0.2");
        jumpNanos = TimeUnit.MILLISECONDS.toNanos(10_100);
        jumpWhenCounted = src;
        open(10_000, 64);
        CmListener l = listen(new Endpoint("server"));
        Socket s = silent(l, "127.0.0.2");
        assertTrue(closedByPeer(s, 5000), "still open after its deadline");
        assertEquals(1L, server.counters().get("handshakes_timed_out"));
    }

    @Test
    void oneSourceCannotHoldMoreThanItsShareOfHalfOpenConnections() throws Exception {
        open(10_000, 8);
        Endpoint ep = new Endpoint("server");
        CmListener l = listen(ep);
        InetAddress src = InetAddress.getByName("127.0.0.2");
        List<Socket> held = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            held.add(silent(l, "127.0.0.2"));
        }
        Await.until("8 half-open connections", () -> server.handshakes().halfOpen(src) == 8);
        try (LogCapture log = LogCapture.start()) {
            for (int i = 0; i < 30; i++) {
                Socket extra = silent(l, "127.0.0.2");
                assertTrue(closedByPeer(extra, 5000), "connection " + (9 + i) + " from one source was kept");
            }
            assertTrue(log.contains("refusing a connection from 127.0.0.2: 8 connections from there are already in "
                    + "the handshake"), log.text());
            assertTrue(log.lines().stream().filter(x -> x.contains("refusing a connection")).count() <= 6,
                    "the log is rate-limited: " + log.text());
        }
        assertEquals(30L, server.counters().get("handshakes_refused"));
        assertEquals(8, server.handshakes().halfOpen(src));
        for (Socket s : held) {
            assertTrue(!closedByPeer(s, 50), "the first 8 are kept until their deadline");
        }
        // another source, and an honest peer, still get in
        InetAddress src3 = InetAddress.getByName("127.0.0.3");
        Socket other = silent(l, "127.0.0.3");
        Await.until("the other source counted", () -> server.handshakes().halfOpen(src3) == 1);
        assertTrue(!closedByPeer(other, 200));
        assertServes(l, ep);
        // a slot comes back when its connection goes
        held.get(0).close();
        Await.until("a slot freed", () -> server.handshakes().halfOpen(src) == 7);
        Socket again = silent(l, "127.0.0.2");
        Await.until("admitted again", () -> server.handshakes().halfOpen(src) == 8);
        assertTrue(!closedByPeer(again, 200));
    }

    @Test
    void limitsAreValidated() {
        assertThrows(IllegalArgumentException.class, () -> new SoftDevice.Handshake(0, 8));
        assertThrows(IllegalArgumentException.class, () -> new SoftDevice.Handshake(1000, 0));
    }
}

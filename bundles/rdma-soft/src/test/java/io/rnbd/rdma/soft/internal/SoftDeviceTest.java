package io.rnbd.rdma.soft.internal;

import io.rnbd.common.AdaptivePoll;
import io.rnbd.common.SpareCpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.LinkState;
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

import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

class SoftDeviceTest {
    private static InetAddress ip(String s) throws Exception {
        return InetAddress.getByName(s);
    }

    @Test
    void configurationIsValidatedUpFront() {
        assertEquals(Errno.EINVAL, assertThrows(RdmaException.class, () -> new SoftDevice("", ip("127.0.0.1"))).errno());
        assertEquals(Errno.EINVAL,
                assertThrows(RdmaException.class, () -> new SoftDevice("bad name", ip("127.0.0.1"))).errno());
        assertEquals(Errno.EINVAL, assertThrows(RdmaException.class, () -> new SoftDevice("s", ip("0.0.0.0"))).errno());
        assertEquals(Errno.EADDRNOTAVAIL,
                assertThrows(RdmaException.class, () -> new SoftDevice("s", ip("192.0.2.1"))).errno());
    }

    @Test
    void addressesMustBeLiterals() throws Exception {
        assertEquals(ip("127.0.0.2"), SoftDevice.parseAddress(" 127.0.0.2 "));
        assertEquals(ip("::1"), SoftDevice.parseAddress("::1"));
        for (String bad : new String[] {"localhost", "", "300.1.1.1", "1.2.3", "example.org", null}) {
            assertEquals(Errno.EINVAL, assertThrows(RdmaException.class, () -> SoftDevice.parseAddress(bad)).errno(),
                    String.valueOf(bad));
        }
    }

    @Test
    void devicesOnTwoLoopbackAddressesTalkFromTheirOwnAddresses() throws Exception {
        try (SoftDevice a = new SoftDevice("a", ip("127.0.0.1")); SoftDevice b = new SoftDevice("b", ip("127.0.0.2"))) {
            assertEquals("soft", a.provider());
            assertEquals(LinkState.ACTIVE, a.linkState());
            assertEquals(List.of(ip("127.0.0.2")), b.addresses());
            ProtectionDomain apd = a.allocPd();
            ProtectionDomain bpd = b.allocPd();
            MemoryRegion abuf = apd.register(ByteBuffer.allocateDirect(64), Access.all());
            MemoryRegion bbuf = bpd.register(ByteBuffer.allocateDirect(64), Access.all());
            Endpoint server = new Endpoint("server");
            Endpoint client = new Endpoint("client");
            CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
            CmListener l = a.listen(new InetSocketAddress(ip("127.0.0.1"), 0), req -> {
                try {
                    QueuePair qp = req.accept(new QpInit(apd, 4, 4, 1, server), server);
                    qp.postRecv(new RecvWr(1, List.of(Sge.whole(abuf))));
                    accepted.complete(qp);
                } catch (RdmaException e) {
                    accepted.completeExceptionally(e);
                }
            });
            QueuePair cqp = b.connect(l.localAddress(), new QpInit(bpd, 4, 4, 1, client), new byte[] {1}, client);
            QueuePair sqp = accepted.get(10, TimeUnit.SECONDS);
            client.nextEvent(CmEvent.Type.ESTABLISHED);
            assertEquals(ip("127.0.0.2"), cqp.localAddress().getAddress());
            assertEquals(ip("127.0.0.2"), sqp.remoteAddress().getAddress());
            assertEquals(cqp.localAddress(), sqp.remoteAddress());
            bbuf.buffer().put(0, (byte) 42);
            cqp.postSend(SendWr.send(1, List.of(new Sge(bbuf, 0, 1))));
            client.nextWc(WcStatus.SUCCESS);
            server.nextWc(WcStatus.SUCCESS);
            assertEquals(42, abuf.buffer().get(0));
            assertTrue(a.nodeId().matches("[0-9a-f]{4}(:[0-9a-f]{4}){3}"));
            assertFalse(a.nodeId().equals(b.nodeId()));
        }
    }

    @Test
    void worksOverIpv6Loopback() throws Exception {
        InetAddress v6 = ip("::1");
        boolean bindable;
        try (ServerSocket probe = new java.net.ServerSocket(0, 1, v6)) {
            bindable = true;
        } catch (IOException e) {
            bindable = false;
        }
        Assumptions.assumeTrue(bindable, "no IPv6 loopback on this host");
        try (SoftDevice d = new SoftDevice("six", v6)) {
            ProtectionDomain pd = d.allocPd();
            Endpoint ep = new Endpoint("c");
            CmListener l = d.listen(new InetSocketAddress(v6, 0), r -> r.reject(Errno.EBUSY));
            d.connect(l.localAddress(), new QpInit(pd, 2, 2, 1, ep), new byte[] {1, 2}, ep);
            assertEquals(Errno.EBUSY, ep.nextEvent(CmEvent.Type.REJECTED).status());
        }
    }

    @Test
    void closingTheDeviceStopsItsThreadAndRefusesWork() throws Exception {
        SoftDevice d = new SoftDevice("gone", ip("127.0.0.1"));
        assertTrue(threadAlive("rdma-soft-gone"));
        d.close();
        d.close();
        assertFalse(threadAlive("rdma-soft-gone"));
        assertEquals(LinkState.DOWN, d.linkState());
        assertEquals(Errno.ENODEV, assertThrows(RdmaException.class, d::allocPd).errno());
        assertEquals(Errno.ENODEV, assertThrows(RdmaException.class,
                () -> d.listen(new InetSocketAddress(ip("127.0.0.1"), 0), r -> r.reject(1))).errno());
    }

    @Test
    void ioThreadsAreValidatedAndAllStopWithTheDevice() throws Exception {
        assertEquals(Errno.EINVAL, assertThrows(RdmaException.class, () -> new SoftDevice("t", ip("127.0.0.1"), 0)).errno());
        assertEquals(Errno.EINVAL, assertThrows(RdmaException.class,
                () -> new SoftDevice("t", ip("127.0.0.1"), SoftDevice.MAX_IO_THREADS + 1)).errno());
        SoftDevice d = new SoftDevice("three", ip("127.0.0.1"), 3);
        assertTrue(threadAlive("rdma-soft-three") && threadAlive("rdma-soft-three-1") && threadAlive("rdma-soft-three-2"));
        // queue pairs are placed round-robin over the threads
        assertEquals(3, List.of(d.reactor(), d.nextReactor(), d.nextReactor(), d.nextReactor()).stream().distinct().count());
        d.close();
        assertFalse(threadAlive("rdma-soft-three") || threadAlive("rdma-soft-three-1") || threadAlive("rdma-soft-three-2"));
    }

    @Test
    void busyPollTimeIsValidatedAndPollingThreadsStopWithTheDevice() throws Exception {
        for (int bad : new int[] {-1, SoftDevice.MAX_POLL_USEC + 1}) {
            assertEquals(Errno.EINVAL, assertThrows(RdmaException.class,
                    () -> new SoftDevice("p", ip("127.0.0.1"), 1, bad)).errno(), "poll.usec " + bad);
        }
        assertFalse(threadAlive("rdma-soft-p"), "a refused configuration leaves no thread behind");
        SoftDevice d = new SoftDevice("polling", ip("127.0.0.1"), 2, SoftDevice.MAX_POLL_USEC);
        assertTrue(threadAlive("rdma-soft-polling") && threadAlive("rdma-soft-polling-1"));
        d.close();
        assertFalse(threadAlive("rdma-soft-polling") || threadAlive("rdma-soft-polling-1"));
    }

    @Test
    void busyPollBeginsOnlyWhenACpuIsSpareAndTheProbeClosesWithTheDevice(@TempDir Path dir) throws Exception {
        Path busy = Files.writeString(dir.resolve("busy"), "1.90 1.80 1.70 3/90 1\n");
        Path idle = Files.writeString(dir.resolve("idle"), "0.10 0.10 0.10 1/90 1\n");
        List<SpareCpu> probes = new ArrayList<>();
        for (Path loadavg : List.of(busy, idle)) {
            // a fixed window, so that every idle period asks (the adaptive one: SoftAdaptivePollTest)
            SoftDevice d = new SoftDevice("gate", ip("127.0.0.1"), 1, SoftDevice.MAX_POLL_USEC, n -> {
                SpareCpu p = new SpareCpu(loadavg, 2);
                probes.add(p);
                return AdaptivePoll.fixed(n, p, System::nanoTime);
            });
            for (int i = 0; i < 5; i++) {
                d.reactor().executeAndWait(() -> { }); // each task is one turn of the IO loop, ending in a poll decision
            }
            Await.until("5 poll decisions", () -> d.pollCounts()[0] + d.pollCounts()[1] >= 5, Duration.ofSeconds(10));
            long[] c = d.pollCounts();
            // what rdma:statistic shows: the same counts, in this order
            assertEquals(List.of("polls", "poll_hits", "polls_skipped", "handshakes_refused", "handshakes_timed_out",
                    "loopback_connects", "invalidations_posted", "invalidations_at_once"),
                    List.copyOf(d.counters().keySet()));
            assertTrue(d.counters().get("polls") >= c[0] && d.counters().get("polls_skipped") >= c[1]);
            if (loadavg == busy) {
                assertEquals(0, c[0], "3 runnable tasks on 2 CPUs: no poll may begin");
                assertTrue(c[1] >= 5, "every turn asked and was refused: " + c[1]);
            } else {
                assertTrue(c[0] >= 5, "a spare CPU: every turn polls: " + c[0]);
                assertEquals(0, c[1]);
            }
            d.close();
        }
        assertEquals(2, probes.size(), "one probe per polling IO thread");
        assertTrue(probes.stream().noneMatch(SpareCpu::isOpen), "the device's close releases the probe's descriptor");
    }

    @Test
    void sendQueueOverflowIsRefusedWithEnomem() throws Exception {
        try (SoftDevice d = new SoftDevice("q", ip("127.0.0.1"))) {
            ProtectionDomain pd = d.allocPd();
            MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(64), Access.all());
            Endpoint ep = new Endpoint("c");
            CmListener l = d.listen(new InetSocketAddress(ip("127.0.0.1"), 0), r -> { });
            QueuePair qp = d.connect(l.localAddress(), new QpInit(pd, 2, 2, 1, ep), null, ep);
            qp.postSend(SendWr.send(1, List.of(Sge.whole(mr))));
            qp.postSend(SendWr.send(2, List.of(Sge.whole(mr))));
            assertEquals(Errno.ENOMEM, assertThrows(RdmaException.class,
                    () -> qp.postSend(SendWr.send(3, List.of(Sge.whole(mr))))).errno());
            assertEquals(Errno.EINVAL, assertThrows(RdmaException.class,
                    () -> qp.postRecv(new RecvWr(1, List.of(Sge.whole(mr), Sge.whole(mr))))).errno());
            qp.close();
            assertEquals(1, ep.nextWc(WcStatus.WR_FLUSH_ERR).wrId());
            assertEquals(2, ep.nextWc(WcStatus.WR_FLUSH_ERR).wrId());
        }
    }

    @Test
    void aChainThatDoesNotFitOrHasABadRequestIsRefusedWhole() throws Exception {
        try (SoftDevice d = new SoftDevice("q", ip("127.0.0.1"))) {
            ProtectionDomain pd = d.allocPd();
            MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(64), Access.all());
            Endpoint ep = new Endpoint("c");
            CmListener l = d.listen(new InetSocketAddress(ip("127.0.0.1"), 0), r -> { });
            QueuePair qp = d.connect(l.localAddress(), new QpInit(pd, 3, 2, 1, ep), null, ep);
            qp.postSend(SendWr.send(1, List.of(Sge.whole(mr))));
            assertEquals(Errno.ENOMEM, assertThrows(RdmaException.class, () -> qp.postSend(List.of(
                    SendWr.send(2, List.of(Sge.whole(mr))), SendWr.send(3, List.of(Sge.whole(mr))),
                    SendWr.send(4, List.of(Sge.whole(mr)))))).errno());
            assertEquals(Errno.EINVAL, assertThrows(RdmaException.class, () -> qp.postSend(List.of(
                    SendWr.send(5, List.of(Sge.whole(mr))), SendWr.send(6, List.of(Sge.whole(mr), Sge.whole(mr)))))).errno());
            qp.postSend(List.of(SendWr.send(7, List.of(Sge.whole(mr))), SendWr.send(8, List.of(Sge.whole(mr)))));
            qp.close();
            // nothing of a refused chain was posted; a chain that fits was, in order
            assertEquals(1, ep.nextWc(WcStatus.WR_FLUSH_ERR).wrId());
            assertEquals(7, ep.nextWc(WcStatus.WR_FLUSH_ERR).wrId());
            assertEquals(8, ep.nextWc(WcStatus.WR_FLUSH_ERR).wrId());
        }
    }

    @Test
    void manyQuickConnectsAreAllAnswered() throws Exception {
        // regression: a connect racing the device's timer tick must not time out at once
        try (SoftDevice d = new SoftDevice("quick", ip("127.0.0.1"))) {
            ProtectionDomain pd = d.allocPd();
            CmListener l = d.listen(new InetSocketAddress(ip("127.0.0.1"), 0), r -> r.reject(Errno.EBUSY));
            long end = System.nanoTime() + 1_200_000_000L;
            int n = 0;
            while (System.nanoTime() < end || n < 20) {
                Endpoint ep = new Endpoint("c" + n++);
                QueuePair qp = d.connect(l.localAddress(), new QpInit(pd, 2, 2, 1, ep), null, ep);
                assertEquals(Errno.EBUSY, ep.nextEvent(CmEvent.Type.REJECTED).status());
                qp.close();
            }
        }
    }

    private static boolean threadAlive(String name) {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals(name) && t.isAlive());
    }
}

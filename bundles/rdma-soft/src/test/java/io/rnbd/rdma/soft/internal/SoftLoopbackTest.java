package io.rnbd.rdma.soft.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
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
import io.rnbd.testkit.rdma.Endpoint;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A device's connections to its own listeners go over a Unix socket beside the port, as rxe
 * loops a packet for its own address back into its receive path; connections to any other
 * device stay TCP. The conformance suite runs over the loopback too
 * ({@link SoftProviderLoopbackConformanceTest}); these tests pin the route itself.
 */
@Timeout(60)
class SoftLoopbackTest {
    private static final int LEN = 4096;

    /** Both ends on {@code server}'s listener, the client on {@code client} (the same device or not). */
    private record Connected(QueuePair serverQp, QueuePair clientQp, Endpoint serverEnd, Endpoint clientEnd,
                             MemoryRegion serverMr, MemoryRegion clientMr, CmListener listener) {
    }

    private static Connected connect(SoftDevice server, SoftDevice client) throws Exception {
        ProtectionDomain spd = server.allocPd();
        ProtectionDomain cpd = client.allocPd();
        MemoryRegion smr = spd.register(ByteBuffer.allocateDirect(LEN), Access.all());
        MemoryRegion cmr = cpd.register(ByteBuffer.allocateDirect(LEN), Access.all());
        Endpoint serverEnd = new Endpoint("server");
        Endpoint clientEnd = new Endpoint("client");
        CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
        CmListener listener = server.listen(new InetSocketAddress(server.address(), 0), req -> {
            try {
                QueuePair qp = req.accept(new QpInit(spd, 16, 16, 1, serverEnd), serverEnd);
                qp.postRecv(new RecvWr(7, List.of(new Sge(smr, 0, LEN))));
                accepted.complete(qp);
            } catch (RdmaException e) {
                accepted.completeExceptionally(e);
            }
        });
        QueuePair cqp = client.connect(listener.localAddress(), new QpInit(cpd, 16, 16, 1, clientEnd), null,
                clientEnd);
        clientEnd.nextEvent(CmEvent.Type.ESTABLISHED);
        QueuePair sqp = accepted.get(10, TimeUnit.SECONDS);
        serverEnd.nextEvent(CmEvent.Type.ESTABLISHED);
        return new Connected(sqp, cqp, serverEnd, clientEnd, smr, cmr, listener);
    }

    private static byte[] pattern(int seed) {
        byte[] b = new byte[LEN];
        for (int i = 0; i < LEN; i++) {
            b[i] = (byte) (seed + i * 13);
        }
        return b;
    }

    private static byte[] bytes(MemoryRegion mr) {
        byte[] b = new byte[LEN];
        mr.buffer().get(0, b);
        return b;
    }

    @Test
    void aDeviceReachesItsOwnListenerOverAUnixSocketWithEveryVerb() throws Exception {
        try (SoftDevice d = new SoftDevice("lo0", InetAddress.getByName("127.0.0.1"))) {
            Connected c = connect(d, d);
            assertTrue(SoftLoopback.isUnix(((SoftQp) c.clientQp()).ch), "the active end is a Unix socket");
            assertTrue(SoftLoopback.isUnix(((SoftQp) c.serverQp()).ch), "the passive end is a Unix socket");
            assertEquals(1L, d.counters().get("loopback_connects"));
            // what RDMA CM shows: the device's address both ways, the listener's port on the passive side
            assertEquals(d.address(), c.clientQp().remoteAddress().getAddress());
            assertEquals(c.listener().localAddress().getPort(), c.clientQp().remoteAddress().getPort());
            assertEquals(d.address(), c.clientQp().localAddress().getAddress());
            assertEquals(d.address(), c.serverQp().remoteAddress().getAddress());
            assertEquals(c.listener().localAddress(), c.serverQp().localAddress());

            // SEND into the posted RECV
            c.clientMr().buffer().put(0, pattern(1));
            c.clientQp().postSend(SendWr.send(1, List.of(new Sge(c.clientMr(), 0, LEN))));
            assertEquals(1, c.clientEnd().nextWc(WcStatus.SUCCESS).wrId());
            assertEquals(LEN, c.serverEnd().nextWc(WcStatus.SUCCESS).byteLen());
            assertArrayEquals(pattern(1), bytes(c.serverMr()));
            // RDMA WRITE into the server's region, then READ it back elsewhere
            c.clientMr().buffer().put(0, pattern(2));
            c.clientQp().postSend(SendWr.write(2, List.of(new Sge(c.clientMr(), 0, LEN)),
                    c.serverMr().address(), c.serverMr().rkey()));
            assertEquals(2, c.clientEnd().nextWc(WcStatus.SUCCESS).wrId());
            assertArrayEquals(pattern(2), bytes(c.serverMr()));
            c.serverMr().buffer().put(0, pattern(3));
            c.clientQp().postSend(SendWr.read(3, List.of(new Sge(c.clientMr(), 0, LEN)),
                    c.serverMr().address(), c.serverMr().rkey()));
            assertEquals(3, c.clientEnd().nextWc(WcStatus.SUCCESS).wrId());
            assertArrayEquals(pattern(3), bytes(c.clientMr()));

            // a disconnect reaches the other end as over TCP
            c.clientQp().close();
            c.serverEnd().nextEvent(CmEvent.Type.DISCONNECTED);
            c.serverQp().close();
        }
    }

    @Test
    void anotherDeviceInTheSameProcessConnectsOverTcp() throws Exception {
        try (SoftDevice server = new SoftDevice("srv", InetAddress.getByName("127.0.0.1"));
                SoftDevice client = new SoftDevice("clt", InetAddress.getByName("127.0.0.2"))) {
            Connected c = connect(server, client);
            assertFalse(SoftLoopback.isUnix(((SoftQp) c.clientQp()).ch), "two devices talk TCP, as two hosts");
            assertFalse(SoftLoopback.isUnix(((SoftQp) c.serverQp()).ch));
            assertEquals(0L, client.counters().get("loopback_connects"));
            assertEquals(0L, server.counters().get("loopback_connects"));
            c.clientQp().close();
            c.serverQp().close();
        }
    }

    @Test
    void theSocketGoesWithItsListenerAndTheDirectoryWithTheDevice() throws Exception {
        Path socket;
        Path dir;
        try (SoftDevice d = new SoftDevice("lo1", InetAddress.getByName("127.0.0.1"))) {
            ProtectionDomain pd = d.allocPd();
            CmListener l = d.listen(new InetSocketAddress(d.address(), 0), req -> req.reject(Errno.EPERM));
            int port = l.localAddress().getPort();
            socket = d.loopback().socket(port);
            assertNotNull(socket);
            dir = socket.getParent();
            assertTrue(Files.exists(socket));
            assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(
                    Files.getPosixFilePermissions(dir)), "only this user may connect");
            l.close();
            assertFalse(Files.exists(socket), "the socket file goes with the listener");
            assertNull(d.loopback().socket(port));

            // nobody listens: refused as over TCP, and not counted as a loopback connection
            Endpoint e = new Endpoint("client");
            d.connect(new InetSocketAddress(d.address(), port), new QpInit(pd, 4, 4, 1, e), null, e);
            CmEvent ev = e.nextEvent(CmEvent.Type.UNREACHABLE);
            assertEquals(Errno.ECONNREFUSED, ev.status());
            assertEquals(0L, d.counters().get("loopback_connects"));
        }
        assertFalse(Files.exists(dir), "the device's socket directory goes with it");
    }

    @Test
    void aSocketFileRemovedUnderTheDeviceSendsItsConnectionsOverTcp() throws Exception {
        try (SoftDevice d = new SoftDevice("lo3", InetAddress.getByName("127.0.0.1"))) {
            Connected c = connect(d, d);
            // a cleaned temporary directory takes the socket away while the device runs
            Files.delete(d.loopback().socket(c.listener().localAddress().getPort()));
            Endpoint again = new Endpoint("again");
            QueuePair qp = d.connect(c.listener().localAddress(), new QpInit(d.allocPd(), 4, 4, 1, again), null, again);
            again.nextEvent(CmEvent.Type.ESTABLISHED);
            assertFalse(SoftLoopback.isUnix(((SoftQp) qp).ch), "the TCP port still listens");
            assertEquals(1L, d.counters().get("loopback_connects"), "only the first connection took the loopback");
            qp.close();
            c.clientQp().close();
            c.serverQp().close();
        }
    }

    @Test
    void removingTheDeviceTakesBothEndsOfALoopbackConnectionDown() throws Exception {
        SoftDevice d = new SoftDevice("lo2", InetAddress.getByName("127.0.0.1"));
        Connected c = connect(d, d);
        Path dir = d.loopback().socket(c.listener().localAddress().getPort()).getParent();
        d.close();
        c.serverEnd().nextEvent(CmEvent.Type.DEVICE_REMOVAL);
        c.clientEnd().nextEvent(CmEvent.Type.DEVICE_REMOVAL);
        assertEquals(7, c.serverEnd().nextWc(WcStatus.WR_FLUSH_ERR).wrId(), "the posted RECV flushes");
        assertFalse(Files.exists(dir));
    }

    @Test
    void withoutASocketDirectoryTheListenerIsTcpOnlyAndConnectionsStillWork(@TempDir Path tmp) throws Exception {
        Path notADirectory = Files.writeString(tmp.resolve("file"), "x");
        SoftLoopback broken = new SoftLoopback("x", notADirectory);
        assertNull(broken.bind(4242), "no socket can be made under a file");
        assertNull(broken.route(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 4242),
                InetAddress.getByName("127.0.0.1")), "so connections to the port go over TCP");
        broken.close();
    }

    @Test
    void aTemporaryDirectoryTooDeepForAUnixAddressFallsBackToTmp(@TempDir Path tmp) throws Exception {
        Path deep = Files.createDirectories(tmp.resolve("d".repeat(60)).resolve("e".repeat(60)));
        SoftLoopback lo = new SoftLoopback("x", deep);
        try {
            assertNotNull(lo.bind(4243));
            Path socket = lo.socket(4243);
            assertTrue(socket.startsWith(Path.of("/tmp")), socket.toString());
            assertTrue(socket.toString().length() <= SoftLoopback.MAX_PATH, socket.toString());
        } finally {
            lo.close();
        }
    }
}

package io.rnbd.rdma.soft.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.ConnectRequest;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RecvWr;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WcStatus;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.testkit.rdma.Endpoint;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** Soft-provider specifics: hostile peers on the wire, RNR corner cases, concurrent posting. */
class SoftRobustnessTest {
    private SoftDevice server;
    private SoftDevice client;
    private ProtectionDomain spd;
    private ProtectionDomain cpd;

    @BeforeEach
    void open() throws Exception {
        server = new SoftDevice("srv", InetAddress.getByName("127.0.0.1"));
        client = new SoftDevice("cli", InetAddress.getByName("127.0.0.2"));
        spd = server.allocPd();
        cpd = client.allocPd();
    }

    @AfterEach
    void close() {
        client.close();
        server.close();
    }

    /** Accepts with {@code recvs} RECVs of 4 KiB posted; the accepted QP completes the future. */
    private CmListener listen(Endpoint ep, int recvs, CompletableFuture<QueuePair> accepted) throws RdmaException {
        MemoryRegion rbuf = spd.register(ByteBuffer.allocateDirect(4096 * Math.max(1, recvs)), Access.all());
        return server.listen(new InetSocketAddress(server.address(), 0), req -> {
            try {
                QueuePair qp = req.accept(new QpInit(spd, 1024, 1024, 1, ep), ep);
                for (int i = 0; i < recvs; i++) {
                    qp.postRecv(new RecvWr(i, List.of(new Sge(rbuf, i * 4096, 4096))));
                }
                accepted.complete(qp);
            } catch (RdmaException e) {
                accepted.completeExceptionally(e);
            }
        });
    }

    private static boolean closedByPeer(Socket s) throws Exception {
        s.setSoTimeout(10_000);
        InputStream in = s.getInputStream();
        byte[] b = new byte[256];
        while (true) {
            int n = in.read(b);
            if (n < 0) {
                return true;
            }
        }
    }

    private void assertStillServes(CmListener l, Endpoint ep) throws Exception {
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
    void garbageOnTheWireClosesThatConnectionOnly() throws Exception {
        Endpoint ep = new Endpoint("server");
        CmListener l = listen(ep, 4, new CompletableFuture<>());
        try (Socket s = new Socket(l.localAddress().getAddress(), l.localAddress().getPort())) {
            OutputStream o = s.getOutputStream();
            byte[] junk = new byte[64];
            junk[0] = 99;
            o.write(junk);
            o.flush();
            assertTrue(closedByPeer(s));
        }
        assertStillServes(l, ep);
    }

    @Test
    void helloWithWrongMagicOrOversizedPrivateDataIsDropped() throws Exception {
        Endpoint ep = new Endpoint("server");
        CmListener l = listen(ep, 4, new CompletableFuture<>());
        for (long[] bad : new long[][] {{0x1234L, 0}, {Wire.MAGIC, 57}, {Wire.MAGIC, -1}}) {
            try (Socket s = new Socket(l.localAddress().getAddress(), l.localAddress().getPort())) {
                ByteBuffer h = ByteBuffer.allocate(Wire.HDR + 64).order(ByteOrder.LITTLE_ENDIAN);
                Wire.put(h, Wire.HELLO, Wire.ST_OK, (int) bad[1], bad[0], 0, 0, 0);
                s.getOutputStream().write(h.array());
                assertTrue(closedByPeer(s));
            }
        }
        assertStillServes(l, ep);
    }

    @Test
    void randomFramesFromAnEstablishedPeerNeverTouchProtectedMemory() throws Exception {
        byte[] before = new byte[4096];
        Arrays.fill(before, (byte) 0x5A);
        MemoryRegion readOnly = spd.register(ByteBuffer.allocateDirect(4096), Access.of(Access.LOCAL_WRITE,
                Access.REMOTE_READ));
        readOnly.buffer().put(0, before);
        MemoryRegion writable = spd.register(ByteBuffer.allocateDirect(4096), Access.all());
        Endpoint ep = new Endpoint("server");
        CmListener l = listen(ep, 4, new CompletableFuture<>());
        Random rnd = new Random(7);
        int[] keys = {readOnly.rkey(), writable.rkey(), 0, rnd.nextInt()};
        long[] bases = {readOnly.address(), writable.address(), 0, -1};
        for (int con = 0; con < 200; con++) {
            try (Socket s = new Socket(l.localAddress().getAddress(), l.localAddress().getPort())) {
                s.setSoTimeout(10_000);
                ByteBuffer hello = ByteBuffer.allocate(Wire.HDR).order(ByteOrder.LITTLE_ENDIAN);
                Wire.put(hello, Wire.HELLO, Wire.ST_OK, 0, Wire.MAGIC, 0, 0, 0);
                s.getOutputStream().write(hello.array());
                byte[] reply = s.getInputStream().readNBytes(Wire.HDR);
                assertEquals(Wire.ACCEPT, reply[0]);
                ByteBuffer frames = ByteBuffer.allocate(64 * 1024).order(ByteOrder.LITTLE_ENDIAN);
                for (int f = 0; f < 20 && frames.remaining() > Wire.HDR + 512; f++) {
                    // SEND .. SEND_INV: every frame type of an established connection
                    byte type = (byte) (Wire.SEND + rnd.nextInt(Wire.SEND_INV - Wire.SEND + 1));
                    int len = rnd.nextInt(8) == 0 ? rnd.nextInt(1 << 20) : rnd.nextInt(300);
                    int k = rnd.nextInt(keys.length);
                    long addr = bases[k] + rnd.nextInt(8192) - 2048;
                    byte flags = (byte) (rnd.nextInt(4) == 0 ? rnd.nextInt(256) : rnd.nextInt(2));
                    int acked = rnd.nextInt(4) == 0 ? rnd.nextInt(4) : 0;
                    Wire.put(frames, type, (byte) rnd.nextInt(3), flags, len, addr, keys[k], rnd.nextInt(),
                            rnd.nextInt(9000), acked);
                    int body = Math.min(len, 512);
                    for (int i = 0; i < body && Wire.hasPayload(type); i++) {
                        frames.put((byte) 0x11);
                    }
                }
                s.getOutputStream().write(frames.array(), 0, frames.position());
                s.shutdownOutput();
                s.getInputStream().readAllBytes();
            }
        }
        byte[] after = new byte[4096];
        readOnly.buffer().get(0, after);
        assertArrayEquals(before, after);
        Endpoint fresh = new Endpoint("server2");
        assertStillServes(listen(fresh, 4, new CompletableFuture<>()), fresh);
    }

    @Test
    void aThrowingConnectRequestHandlerRejectsTheInitiator() throws Exception {
        CmListener l = server.listen(new InetSocketAddress(server.address(), 0), req -> {
            throw new IllegalStateException("handler bug");
        });
        Endpoint c = new Endpoint("client");
        client.connect(l.localAddress(), new QpInit(cpd, 8, 8, 1, c), null, c);
        assertEquals(Errno.ECONNREFUSED, c.nextEvent(CmEvent.Type.REJECTED).status());
    }

    @Test
    void aReceiverHeldBackByRnrStillNoticesThePeerLeaving() throws Exception {
        Endpoint ep = new Endpoint("server");
        CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
        CmListener l = listen(ep, 0, accepted);
        Endpoint c = new Endpoint("client");
        QueuePair qp = client.connect(l.localAddress(), new QpInit(cpd, 8, 8, 1, c), null, c);
        c.nextEvent(CmEvent.Type.ESTABLISHED);
        ep.nextEvent(CmEvent.Type.ESTABLISHED);
        MemoryRegion m = cpd.register(ByteBuffer.allocateDirect(64), Access.all());
        qp.postSend(SendWr.send(1, List.of(new Sge(m, 0, 10))));
        qp.disconnect();
        ep.nextEvent(CmEvent.Type.DISCONNECTED);
        c.nextEvent(CmEvent.Type.DISCONNECTED);
        assertEquals(WcStatus.WR_FLUSH_ERR, c.nextWc().status());
    }

    @Test
    void severalThreadsPostingToOneQueuePairKeepEachThreadsOrder() throws Exception {
        int threads = 4;
        int perThread = 500;
        Endpoint ep = new Endpoint("server");
        CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
        MemoryRegion rbuf = spd.register(ByteBuffer.allocateDirect(threads * perThread * 8), Access.all());
        CmListener l = server.listen(new InetSocketAddress(server.address(), 0), req -> {
            try {
                QueuePair qp = req.accept(new QpInit(spd, 16, threads * perThread, 1, ep), ep);
                for (int i = 0; i < threads * perThread; i++) {
                    qp.postRecv(new RecvWr(i, List.of(new Sge(rbuf, i * 8, 8))));
                }
                accepted.complete(qp);
            } catch (RdmaException e) {
                accepted.completeExceptionally(e);
            }
        });
        Endpoint c = new Endpoint("client");
        QueuePair qp = client.connect(l.localAddress(), new QpInit(cpd, threads * perThread, 8, 1, c), null, c);
        c.nextEvent(CmEvent.Type.ESTABLISHED);
        accepted.get(10, TimeUnit.SECONDS);
        MemoryRegion src = cpd.register(ByteBuffer.allocateDirect(threads * perThread * 8), Access.all());
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<?>> jobs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            jobs.add(pool.submit(() -> {
                go.await();
                for (int i = 0; i < perThread; i++) {
                    int slot = thread * perThread + i;
                    src.buffer().putInt(slot * 8, thread).putInt(slot * 8 + 4, i);
                    qp.postSend(SendWr.send(slot, List.of(new Sge(src, slot * 8, 8))));
                }
                return null;
            }));
        }
        go.countDown();
        for (Future<?> f : jobs) {
            f.get(30, TimeUnit.SECONDS);
        }
        pool.shutdown();
        int[] next = new int[threads];
        for (int n = 0; n < threads * perThread; n++) {
            WorkCompletion wc = ep.nextWc(WcStatus.SUCCESS);
            ByteBuffer b = rbuf.buffer();
            int thread = b.getInt((int) wc.wrId() * 8);
            int seq = b.getInt((int) wc.wrId() * 8 + 4);
            assertEquals(next[thread]++, seq, "thread " + thread + " out of order");
        }
        for (int n = 0; n < threads * perThread; n++) {
            c.nextWc(WcStatus.SUCCESS);
        }
        assertTrue(pool.awaitTermination(5, TimeUnit.SECONDS));
    }

    @Test
    void removingTheDeviceWithAnUnansweredRequestFailsTheInitiator() throws Exception {
        CompletableFuture<ConnectRequest> pending = new CompletableFuture<>();
        CmListener l = server.listen(new InetSocketAddress(server.address(), 0), pending::complete);
        Endpoint c = new Endpoint("client");
        client.connect(l.localAddress(), new QpInit(cpd, 8, 8, 1, c), null, c);
        ConnectRequest req = pending.get(10, TimeUnit.SECONDS);
        server.close();
        c.nextEvent(CmEvent.Type.CONNECT_ERROR);
        req.reject(Errno.EPERM);
        assertArrayEquals(new byte[0], req.privateData());
    }
}

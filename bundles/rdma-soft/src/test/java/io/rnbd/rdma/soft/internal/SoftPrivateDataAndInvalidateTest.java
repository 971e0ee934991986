package io.rnbd.rdma.soft.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.ConnectRequest;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QpState;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RecvWr;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WcOpcode;
import io.rnbd.rdma.api.WcStatus;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.testkit.rdma.Endpoint;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The soft provider's side of what Linux's RTRS needs from the verbs: CM private data on
 * ACCEPT and REJECT, the setup hook, SEND_WITH_INV and empty WRITE_WITH_IMM; and peers that
 * abuse them on the wire (frames written by hand from the format in {@link Wire}).
 */
class SoftPrivateDataAndInvalidateTest {
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

    private static byte[] pattern(int len, int seed) {
        byte[] b = new byte[len];
        for (int i = 0; i < len; i++) {
            b[i] = (byte) (seed + i * 13);
        }
        return b;
    }

    private MemoryRegion region(ProtectionDomain pd, int size) throws RdmaException {
        return pd.register(ByteBuffer.allocateDirect(size), Access.all());
    }

    /** A connection whose server side posted {@code recvs} RECVs of 64 bytes (empty ones for size 0) in the hook. */
    private QueuePair[] connect(Endpoint s, Endpoint c, int recvs, int size) throws Exception {
        MemoryRegion rbuf = region(spd, Math.max(64, recvs * size));
        CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
        CmListener l = server.listen(new InetSocketAddress(server.address(), 0), req -> {
            try {
                accepted.complete(req.accept(new QpInit(spd, 64, 64, 1, s), s, null, qp -> {
                    for (int i = 0; i < recvs; i++) {
                        qp.postRecv(new RecvWr(i, size == 0 ? List.of() : List.of(new Sge(rbuf, i * size, size))));
                    }
                }));
            } catch (RdmaException e) {
                accepted.completeExceptionally(e);
            }
        });
        QueuePair cq = client.connect(l.localAddress(), new QpInit(cpd, 64, 64, 1, c), null, c);
        c.nextEvent(CmEvent.Type.ESTABLISHED);
        s.nextEvent(CmEvent.Type.ESTABLISHED);
        return new QueuePair[] {accepted.get(10, TimeUnit.SECONDS), cq};
    }

    /**
     * The API lets any thread post an invalidation. It used to queue its LOCAL_INV completion
     * straight onto the IO thread's callback queue, which only that thread may touch: posted
     * from other threads, completions went missing or waited for the loop's next tick.
     */
    @Test
    void invalidationsPostedFromManyThreadsEachCompleteOnce() throws Exception {
        Endpoint s = new Endpoint("server");
        Endpoint c = new Endpoint("client");
        QueuePair sq = connect(s, c, 0, 64)[0];
        MemoryRegion mr = region(spd, 4096);
        int threads = 4;
        int each = 2000;
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        try {
            List<java.util.concurrent.Future<Void>> posted = new java.util.ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long base = (long) t * each;
                posted.add(pool.submit(() -> {
                    for (int i = 0; i < each; i++) {
                        sq.postInvalidate(base + i, mr);
                    }
                    return null;
                }));
            }
            for (java.util.concurrent.Future<Void> f : posted) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        java.util.Set<Long> seen = new java.util.HashSet<>();
        for (int i = 0; i < threads * each; i++) {
            WorkCompletion wc = s.nextWc(WcStatus.SUCCESS);
            assertEquals(WcOpcode.LOCAL_INV, wc.opcode());
            assertTrue(seen.add(wc.wrId()), "LOCAL_INV " + wc.wrId() + " completed twice");
        }
        assertEquals(0, s.pendingCompletions());
    }

    // ------------------------------------------------------------------ private data, setup hook

    @Test
    void acceptAndRejectPrivateDataReachTheInitiatorByteForByte() throws Exception {
        byte[] con = pattern(56, 1);
        byte[] rep = pattern(196, 2);
        byte[] rej = pattern(148, 3);
        AtomicReference<byte[]> seen = new AtomicReference<>();
        CmListener l = server.listen(new InetSocketAddress(server.address(), 0), req -> {
            seen.set(req.privateData());
            Endpoint s = new Endpoint("server");
            try {
                if (req.privateData()[0] == con[0]) {
                    req.accept(new QpInit(spd, 8, 8, 1, s), s, rep, qp -> { });
                } else {
                    req.reject(Errno.EBUSY, rej);
                }
            } catch (RdmaException e) {
                throw new IllegalStateException(e);
            }
        });
        Endpoint c = new Endpoint("client");
        client.connect(l.localAddress(), new QpInit(cpd, 8, 8, 1, c), con, c);
        CmEvent up = c.nextEvent(CmEvent.Type.ESTABLISHED);
        assertArrayEquals(con, seen.get());
        assertArrayEquals(rep, up.privateData());

        Endpoint c2 = new Endpoint("client2");
        byte[] other = pattern(3, 9);
        client.connect(l.localAddress(), new QpInit(cpd, 8, 8, 1, c2), other, c2);
        CmEvent no = c2.nextEvent(CmEvent.Type.REJECTED);
        assertEquals(Errno.EBUSY, no.status());
        assertArrayEquals(rej, no.privateData());
        assertArrayEquals(other, seen.get());
    }

    @Test
    void oversizedAcceptOrRejectPrivateDataIsRefusedBeforeAnythingIsSent() throws Exception {
        CompletableFuture<ConnectRequest> pending = new CompletableFuture<>();
        CmListener l = server.listen(new InetSocketAddress(server.address(), 0), pending::complete);
        Endpoint c = new Endpoint("client");
        client.connect(l.localAddress(), new QpInit(cpd, 8, 8, 1, c), null, c);
        ConnectRequest req = pending.get(10, TimeUnit.SECONDS);
        Endpoint s = new Endpoint("server");
        RdmaException tooLong = assertThrows(RdmaException.class,
                () -> req.accept(new QpInit(spd, 8, 8, 1, s), s, new byte[197], qp -> { }));
        assertEquals(Errno.EINVAL, tooLong.errno());
        assertThrows(IllegalArgumentException.class, () -> req.reject(Errno.EPERM, new byte[149]));
        // still unanswered: a proper reject goes through
        req.reject(Errno.EPERM, new byte[] {7});
        CmEvent ev = c.nextEvent(CmEvent.Type.REJECTED);
        assertEquals(Errno.EPERM, ev.status());
        assertArrayEquals(new byte[] {7}, ev.privateData());
    }

    @Test
    void theSetupHookPostsBeforeTheAcceptLeavesSoTheFirstSendNeverWaits() throws Exception {
        Endpoint s = new Endpoint("server");
        MemoryRegion rbuf = region(spd, 64);
        AtomicReference<QueuePair> hooked = new AtomicReference<>();
        AtomicReference<QpState> stateInHook = new AtomicReference<>();
        CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
        CmListener l = server.listen(new InetSocketAddress(server.address(), 0), req -> {
            try {
                accepted.complete(req.accept(new QpInit(spd, 8, 8, 1, s), s, null, qp -> {
                    hooked.set(qp);
                    stateInHook.set(qp.state());
                    qp.postRecv(new RecvWr(41, List.of(Sge.whole(rbuf))));
                }));
            } catch (RdmaException e) {
                accepted.completeExceptionally(e);
            }
        });
        MemoryRegion sbuf = region(cpd, 64);
        sbuf.buffer().put(0, pattern(20, 5));
        CompletableFuture<WcStatus> firstSend = new CompletableFuture<>();
        // the initiator sends from its ESTABLISHED callback, the earliest moment it can
        client.connect(l.localAddress(), new QpInit(cpd, 8, 8, 1, (qp, wc) -> firstSend.complete(wc.status())),
                null, (qp, ev) -> {
                    if (ev.type() == CmEvent.Type.ESTABLISHED) {
                        try {
                            qp.postSend(SendWr.send(1, List.of(new Sge(sbuf, 0, 20))));
                        } catch (RdmaException e) {
                            firstSend.completeExceptionally(e);
                        }
                    }
                });
        assertEquals(WcStatus.SUCCESS, firstSend.get(10, TimeUnit.SECONDS));
        WorkCompletion rc = s.nextWc(WcStatus.SUCCESS);
        assertEquals(41, rc.wrId());
        assertArrayEquals(pattern(20, 5), bytes(rbuf, 20));
        assertSame(accepted.get(10, TimeUnit.SECONDS), hooked.get(), "the hook gets the accepted QP");
        assertEquals(QpState.INIT, stateInHook.get(), "the hook runs before the connection is up");
    }

    @Test
    void aFailingSetupHookRejectsTheInitiatorAndLeavesNothingBehind() throws Exception {
        Endpoint s = new Endpoint("server");
        MemoryRegion rbuf = region(spd, 64);
        AtomicReference<QueuePair> hooked = new AtomicReference<>();
        CompletableFuture<RdmaException> thrown = new CompletableFuture<>();
        CmListener l = server.listen(new InetSocketAddress(server.address(), 0), req -> {
            try {
                req.accept(new QpInit(spd, 8, 8, 1, s), s, new byte[] {1}, qp -> {
                    hooked.set(qp);
                    qp.postRecv(new RecvWr(1, List.of(Sge.whole(rbuf))));
                    throw new RdmaException(Errno.ENOMEM, "no buffers for you");
                });
                thrown.complete(null);
            } catch (RdmaException e) {
                thrown.complete(e);
            }
        });
        Endpoint c = new Endpoint("client");
        QueuePair cq = client.connect(l.localAddress(), new QpInit(cpd, 8, 8, 1, c), null, c);
        assertEquals(Errno.ENOMEM, thrown.get(10, TimeUnit.SECONDS).errno(), "accept passes the hook's error on");
        CmEvent ev = c.nextEvent(CmEvent.Type.REJECTED);
        assertEquals(Errno.ECONNREFUSED, ev.status());
        assertEquals(0, ev.privateData().length, "the accept's private data never left");
        assertEquals(QpState.ERROR, cq.state());
        assertEquals(QpState.CLOSED, hooked.get().state(), "the QP is destroyed");
        s.assertNoWcFor(Duration.ofMillis(200)); // a destroyed QP completes nothing
        cq.close();
    }

    // ------------------------------------------------------------------ SEND_WITH_INV, empty WRITE_WITH_IMM

    private static byte[] bytes(MemoryRegion mr, int len) {
        byte[] b = new byte[len];
        mr.buffer().get(0, b);
        return b;
    }

    @Test
    void sendWithInvalidateKillsTheReceiversRkeyAndReportsIt() throws Exception {
        Endpoint s = new Endpoint("server");
        Endpoint c = new Endpoint("client");
        QueuePair[] qps = connect(s, c, 0, 64);
        // the client's region the server will invalidate (as Linux's server does to its client's FRMR)
        MemoryRegion target = region(cpd, 4096);
        int rkey = target.rkey();
        MemoryRegion crecv = region(cpd, 64);
        qps[1].postRecv(new RecvWr(5, List.of(Sge.whole(crecv))));
        MemoryRegion sbuf = region(spd, 64);
        sbuf.buffer().put(0, pattern(8, 4));
        qps[0].postSend(SendWr.sendWithInv(9, List.of(new Sge(sbuf, 0, 8)), rkey));
        assertEquals(9, s.nextWc(WcStatus.SUCCESS).wrId());
        WorkCompletion rc = c.nextWc(WcStatus.SUCCESS);
        assertEquals(WcOpcode.RECV, rc.opcode());
        assertEquals(8, rc.byteLen());
        assertEquals(rkey, rc.invalidatedRkey());
        assertTrue(rc.withInv());
        assertFalse(rc.hasImm());
        assertFalse(target.valid());
        assertArrayEquals(pattern(8, 4), bytes(crecv, 8));

        // the server may no longer write there
        qps[0].postSend(SendWr.write(10, List.of(new Sge(sbuf, 0, 8)), target.address(), rkey));
        assertEquals(WcStatus.REM_ACCESS_ERR, s.nextWc().status());
    }

    @Test
    void sendWithInvalidateOfAnUnknownRkeyFailsTheReceiversRecvAndQp() throws Exception {
        assertInvalidateRefused(rkeyOf -> 0x5A5A5A5A);
    }

    @Test
    void sendWithInvalidateOfAnotherProtectionDomainsRkeyIsRefusedAndTheRegionLives() throws Exception {
        ProtectionDomain other = client.allocPd();
        MemoryRegion foreign = region(other, 4096);
        assertInvalidateRefused(x -> foreign.rkey());
        assertTrue(foreign.valid(), "a region of another PD cannot be invalidated through this QP");
        assertEquals(foreign, client.mem().lookup(foreign.rkey()));
    }

    private void assertInvalidateRefused(java.util.function.IntUnaryOperator key) throws Exception {
        Endpoint s = new Endpoint("server");
        Endpoint c = new Endpoint("client");
        QueuePair[] qps = connect(s, c, 0, 64);
        MemoryRegion crecv = region(cpd, 64);
        qps[1].postRecv(new RecvWr(5, List.of(Sge.whole(crecv))));
        qps[1].postRecv(new RecvWr(6, List.of(Sge.whole(crecv))));
        MemoryRegion sbuf = region(spd, 64);
        qps[0].postSend(SendWr.sendWithInv(9, List.of(new Sge(sbuf, 0, 8)), key.applyAsInt(0)));
        WorkCompletion rc = c.nextWc();
        assertEquals(5, rc.wrId());
        assertEquals(WcStatus.REM_OP_ERR, rc.status());
        assertNull(rc.invalidatedRkey());
        assertEquals(6, c.nextWc(WcStatus.WR_FLUSH_ERR).wrId());
        assertEquals(QpState.ERROR, qps[1].state());
        c.nextEvent(CmEvent.Type.DISCONNECTED);
        // as on rxe (IB class J): the request itself was acknowledged; the connection then goes
        assertEquals(9, s.nextWc(WcStatus.SUCCESS).wrId());
        s.nextEvent(CmEvent.Type.DISCONNECTED);
    }

    @Test
    void emptyWriteWithImmediateAndRkeyZeroConsumesOneZeroLengthRecv() throws Exception {
        Endpoint s = new Endpoint("server");
        Endpoint c = new Endpoint("client");
        QueuePair[] qps = connect(s, c, 2, 0);
        // Linux's heartbeat: no SGE, remote address 0, rkey 0
        qps[1].postSend(SendWr.writeWithImm(1, List.of(), 0, 0, 0x8000_0000));
        qps[1].postSend(SendWr.writeWithImm(2, List.of(), 0, 0, 0x1234_5678));
        for (int i = 0; i < 2; i++) {
            assertEquals(i + 1, c.nextWc(WcStatus.SUCCESS).wrId());
            WorkCompletion rc = s.nextWc(WcStatus.SUCCESS);
            assertEquals(i, rc.wrId(), "one RECV per WRITE_WITH_IMM, in order");
            assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, rc.opcode());
            assertEquals(0, rc.byteLen());
            assertEquals(i == 0 ? 0x8000_0000 : 0x1234_5678, rc.imm());
        }
        // a third one finds no RECV: it waits (RNR), it does not fail
        qps[1].postSend(SendWr.writeWithImm(3, List.of(), 0, 0, 3));
        c.assertNoWcFor(Duration.ofMillis(200));
        qps[0].postRecv(new RecvWr(7, List.of()));
        assertEquals(3, c.nextWc(WcStatus.SUCCESS).wrId());
        assertEquals(7, s.nextWc(WcStatus.SUCCESS).wrId());
        assertEquals(QpState.RTS, qps[0].state());
    }

    @Test
    void emptySendWithInvalidateFitsAZeroLengthRecv() throws Exception {
        Endpoint s = new Endpoint("server");
        Endpoint c = new Endpoint("client");
        QueuePair[] qps = connect(s, c, 1, 0);
        MemoryRegion target = region(spd, 4096);
        qps[1].postSend(SendWr.sendWithInv(1, List.of(), target.rkey()));
        assertEquals(1, c.nextWc(WcStatus.SUCCESS).wrId());
        WorkCompletion rc = s.nextWc(WcStatus.SUCCESS);
        assertEquals(0, rc.byteLen());
        assertEquals(target.rkey(), rc.invalidatedRkey());
        assertFalse(target.valid());
        // and a message with a byte in it does not fit one
        qps[0].postRecv(new RecvWr(2, List.of()));
        MemoryRegion one = region(cpd, 64);
        qps[1].postSend(SendWr.send(3, List.of(new Sge(one, 0, 1))));
        assertEquals(WcStatus.LOC_LEN_ERR, s.nextWc().status());
    }

    // ------------------------------------------------------------------ hostile peers

    private static ByteBuffer frame(int payload) {
        return ByteBuffer.allocate(Wire.HDR + payload).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** A fake acceptor: reads the HELLO (and its private data), answers with {@code answer}. */
    private CmEvent connectToFakeAcceptor(byte[] answer, CmEvent.Type expected) throws Exception {
        try (ServerSocket fake = new ServerSocket(0, 1, server.address())) {
            Endpoint c = new Endpoint("client");
            QueuePair qp = client.connect(new InetSocketAddress(server.address(), fake.getLocalPort()),
                    new QpInit(cpd, 8, 8, 1, c), new byte[] {1, 2, 3}, c);
            try (Socket s = fake.accept()) {
                s.setSoTimeout(10_000);
                DataInputStream in = new DataInputStream(s.getInputStream());
                byte[] hello = new byte[Wire.HDR + 3];
                in.readFully(hello);
                // the initiator's HELLO as the format says: type 1, 3 bytes, magic "SOFT" v3, then the data
                assertEquals("01000000" + "03000000" + "0300000054464f53" + "00".repeat(16) + "010203",
                        HexFormat.of().formatHex(hello));
                s.getOutputStream().write(answer);
                s.getOutputStream().flush();
                CmEvent ev = c.nextEvent(expected);
                qp.close();
                return ev;
            }
        }
    }

    @Test
    void anAcceptWrittenByHandIsUnderstood() throws Exception {
        ByteBuffer b = frame(196);
        b.put(HexFormat.of().parseHex("02000000" + "c4000000" + "00".repeat(24)));
        b.put(pattern(196, 6));
        CmEvent ev = connectToFakeAcceptor(b.array(), CmEvent.Type.ESTABLISHED);
        assertArrayEquals(pattern(196, 6), ev.privateData());
    }

    @Test
    void aRejectWrittenByHandIsUnderstood() throws Exception {
        ByteBuffer b = frame(2);
        b.put(HexFormat.of().parseHex("03000000" + "02000000" + "00".repeat(16) + "81000000" + "00000000" + "abcd"));
        CmEvent ev = connectToFakeAcceptor(b.array(), CmEvent.Type.REJECTED);
        assertEquals(Errno.EKEYREJECTED, ev.status());
        assertArrayEquals(new byte[] {(byte) 0xab, (byte) 0xcd}, ev.privateData());
    }

    @Test
    void anAcceptWithMoreThan196BytesOfPrivateDataIsAConnectError() throws Exception {
        ByteBuffer b = frame(197);
        Wire.put(b, Wire.ACCEPT, Wire.ST_OK, 197, 0, 0, 0, 0);
        CmEvent ev = connectToFakeAcceptor(b.array(), CmEvent.Type.CONNECT_ERROR);
        assertEquals(Errno.EPROTO, ev.status());
    }

    @Test
    void aRejectWithMoreThan148BytesOfPrivateDataIsAConnectError() throws Exception {
        ByteBuffer b = frame(149);
        Wire.put(b, Wire.REJECT, Wire.ST_OK, 149, 0, 0, 0, Errno.EPERM);
        CmEvent ev = connectToFakeAcceptor(b.array(), CmEvent.Type.CONNECT_ERROR);
        assertEquals(Errno.EPROTO, ev.status());
    }

    @Test
    void aVersionTwoHelloIsDropped() throws Exception {
        CompletableFuture<ConnectRequest> seen = new CompletableFuture<>();
        CmListener l = server.listen(new InetSocketAddress(server.address(), 0), seen::complete);
        try (Socket s = new Socket(l.localAddress().getAddress(), l.localAddress().getPort())) {
            s.setSoTimeout(10_000);
            ByteBuffer h = frame(0);
            Wire.put(h, Wire.HELLO, Wire.ST_OK, 0, 0x534F_4654_0000_0002L, 0, 0, 0);
            s.getOutputStream().write(h.array());
            assertEquals(-1, s.getInputStream().read(), "closed without an answer");
        }
        assertFalse(seen.isDone());
    }

    /**
     * A raw peer, accepted with two RECVs posted, sends SEND_INV frames by hand: one that
     * names {@code rkey}. Returns the server's endpoint after the exchange.
     */
    private Endpoint rawSendInvalidate(int rkey, boolean expectRefusal) throws Exception {
        Endpoint ep = new Endpoint("server");
        MemoryRegion rbuf = region(spd, 128);
        CmListener l = server.listen(new InetSocketAddress(server.address(), 0), req -> {
            try {
                req.accept(new QpInit(spd, 8, 8, 1, ep), ep, null, qp -> {
                    qp.postRecv(new RecvWr(1, List.of(new Sge(rbuf, 0, 64))));
                    qp.postRecv(new RecvWr(2, List.of(new Sge(rbuf, 64, 64))));
                });
            } catch (RdmaException e) {
                throw new IllegalStateException(e);
            }
        });
        try (Socket s = new Socket(l.localAddress().getAddress(), l.localAddress().getPort())) {
            s.setSoTimeout(10_000);
            ByteBuffer hello = frame(0);
            Wire.put(hello, Wire.HELLO, Wire.ST_OK, 0, Wire.MAGIC, 0, 0, 0);
            s.getOutputStream().write(hello.array());
            InputStream in = s.getInputStream();
            assertEquals(Wire.ACCEPT, in.readNBytes(Wire.HDR)[0]);
            ByteBuffer inv = frame(4);
            Wire.put(inv, Wire.SEND_INV, Wire.ST_OK, Wire.ACK_REQ, 4, 0, rkey, 0, 0, 0);
            inv.put(new byte[] {9, 9, 9, 9});
            s.getOutputStream().write(inv.array());
            ByteBuffer ack = ByteBuffer.wrap(in.readNBytes(Wire.HDR)).order(ByteOrder.LITTLE_ENDIAN);
            assertEquals(Wire.ACK, Wire.type(ack, 0));
            assertEquals(Wire.ST_OK, Wire.status(ack, 0));
            assertEquals(1, Wire.acked(ack, 0), "the SEND_INV is acknowledged either way");
            if (expectRefusal) {
                assertEquals(-1, in.read(), "then the receiver lets the connection go");
            }
        }
        return ep;
    }

    @Test
    void rawSendInvalidateOfALiveRkeyInvalidatesIt() throws Exception {
        MemoryRegion target = region(spd, 4096);
        Endpoint ep = rawSendInvalidate(target.rkey(), false);
        WorkCompletion rc = ep.nextWc(WcStatus.SUCCESS);
        assertEquals(target.rkey(), rc.invalidatedRkey());
        assertEquals(4, rc.byteLen());
        assertFalse(target.valid());
        assertNull(server.mem().lookup(rc.invalidatedRkey()));
    }

    @Test
    void rawSendInvalidateOfUnknownOrForeignRkeysFailsOnlyThatConnection() throws Exception {
        ProtectionDomain other = server.allocPd();
        MemoryRegion foreign = region(other, 4096);
        for (int rkey : new int[] {0, 0x7777_7777, foreign.rkey()}) {
            Endpoint ep = rawSendInvalidate(rkey, true);
            ep.nextEvent(CmEvent.Type.ESTABLISHED);
            assertEquals(WcStatus.REM_OP_ERR, ep.nextWc().status());
            assertEquals(WcStatus.WR_FLUSH_ERR, ep.nextWc().status());
            ep.nextEvent(CmEvent.Type.DISCONNECTED);
        }
        assertTrue(foreign.valid());
        // the device still serves
        Endpoint s = new Endpoint("server");
        Endpoint c = new Endpoint("client");
        QueuePair[] qps = connect(s, c, 1, 64);
        MemoryRegion one = region(cpd, 64);
        qps[1].postSend(SendWr.send(1, List.of(new Sge(one, 0, 1))));
        assertEquals(1, s.nextWc(WcStatus.SUCCESS).byteLen());
    }
}

package io.rnbd.rdma.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.CompletionHandler;
import io.rnbd.rdma.api.ConnectRequest;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QpState;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RecvWr;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WcOpcode;
import io.rnbd.rdma.api.WcStatus;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rdma.disni.internal.DeviceListener;
import io.rnbd.rdma.disni.internal.DisniDevice;
import io.rnbd.rdma.disni.internal.DisniProvider;
import io.rnbd.rdma.disni.internal.DisniRuntime;
import io.rnbd.rdma.disni.internal.DisniSettings;
import io.rnbd.rdma.disni.internal.SysfsDevice;
import io.rnbd.rdma.disni.internal.SysfsScanner;
import io.rnbd.rdma.disni.internal.VerbsNative;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The DiSNI provider on a real verbs device (soft-RoCE in the rxe VM): connection setup,
 * SEND/RECV with and without immediate, RDMA WRITE/READ, rkey invalidation, disconnect
 * and device-removal flushes. Skipped with the reason where there is no RDMA device.
 */
class DisniRxeTest {
    private static final Duration WAIT = RdmaTestEnv.timeout(Duration.ofSeconds(5));

    private SysfsDevice info;
    private DisniDevice device;
    private ProtectionDomain serverPd;
    private ProtectionDomain clientPd;
    private final BlockingQueue<WorkCompletion> serverWc = new LinkedBlockingQueue<>();
    private final BlockingQueue<WorkCompletion> clientWc = new LinkedBlockingQueue<>();
    private final BlockingQueue<CmEvent> serverEv = new LinkedBlockingQueue<>();
    private final BlockingQueue<CmEvent> clientEv = new LinkedBlockingQueue<>();
    private final CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
    /** What the server's completion handler does besides queueing the completion. */
    private volatile CompletionHandler serverHook = (qp, wc) -> { };
    private CmListener listener;
    private QueuePair client;
    private QueuePair server;

    @BeforeEach
    void open() throws Exception {
        info = RdmaTestEnv.device();
        // windows on: this class tests their mechanics on real verbs (rxe's default is off)
        device = DisniDevice.open(info, new DisniSettings((int) WAIT.toMillis(), 1, DisniSettings.MemoryWindows.ON));
        serverPd = device.allocPd();
        clientPd = device.allocPd();
    }

    @AfterEach
    void close() {
        if (device != null) {
            device.close();
        }
    }

    private void connect(List<RecvWr> serverRecvs) throws Exception {
        QpInit sInit = new QpInit(serverPd, 16, 16, 2, (qp, wc) -> {
            serverWc.add(wc);
            serverHook.onCompletion(qp, wc);
        });
        listener = device.listen(new InetSocketAddress(RdmaTestEnv.address(), 0), (ConnectRequest req) -> {
            try {
                // the IB CM delivers the REQ's whole field: what the initiator sent, zero-filled
                assertTrue(startsWith(req.privateData(), new byte[] {1, 2, 3}) && zeroFrom(req.privateData(), 3));
                QueuePair qp = req.accept(sInit, (q, ev) -> serverEv.add(ev));
                for (RecvWr r : serverRecvs) {
                    qp.postRecv(r);
                }
                accepted.complete(qp);
            } catch (Throwable e) {
                accepted.completeExceptionally(e);
            }
        });
        assertNotEquals(0, listener.localAddress().getPort(), "port 0 resolves to the bound port");
        QpInit cInit = new QpInit(clientPd, 16, 16, 2, (qp, wc) -> clientWc.add(wc));
        client = device.connect(listener.localAddress(), cInit, new byte[] {1, 2, 3}, (q, ev) -> clientEv.add(ev));
        // connect() is asynchronous: by the time it returns the CM may already have finished
        // (seen once under TCG, where this thread was descheduled), so only ERROR is wrong here
        QpState early = client.state();
        assertTrue(early == QpState.INIT || early == QpState.RTS, "state right after connect: " + early);
        assertEquals(CmEvent.Type.ESTABLISHED, next(clientEv).type());
        server = accepted.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertEquals(CmEvent.Type.ESTABLISHED, next(serverEv).type());
        assertEquals(QpState.RTS, client.state());
        assertEquals(QpState.RTS, server.state());
        assertEquals(listener.localAddress(), client.remoteAddress());
    }

    private <T> T next(BlockingQueue<T> q) throws InterruptedException {
        T t = q.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertNotNull(t, "nothing arrived within " + WAIT);
        return t;
    }

    private static MemoryRegion region(ProtectionDomain pd, int size) throws RdmaException {
        return pd.register(ByteBuffer.allocateDirect(size), Access.all());
    }

    /**
     * What the IB CM delivers (rxe is RoCE): every private data field whole, zero-filled
     * past what was sent (REQ 56 bytes after rdma_cm's header, REP 196, REJ 148), and a
     * consumer reject as ECONNREFUSED. The lead's RTRS reads CON_RSP out of these.
     */
    @Test
    void theIbCmDeliversWholePrivateDataFields() throws Exception {
        byte[] conReq = "CON_REQ".getBytes(StandardCharsets.US_ASCII);
        byte[] conRsp = "CON_RSP".getBytes(StandardCharsets.US_ASCII);
        byte[] refusal = "REFUSED".getBytes(StandardCharsets.US_ASCII);
        BlockingQueue<byte[]> seen = new LinkedBlockingQueue<>();
        BlockingQueue<Boolean> acceptNext = new LinkedBlockingQueue<>(List.of(true, false));
        listener = device.listen(new InetSocketAddress(RdmaTestEnv.address(), 0), req -> {
            seen.add(req.privateData());
            try {
                if (acceptNext.take()) {
                    accepted.complete(req.accept(new QpInit(serverPd, 8, 8, 1, (q, wc) -> serverWc.add(wc)),
                            (q, ev) -> serverEv.add(ev), conRsp, qp -> { }));
                } else {
                    req.reject(Errno.EPERM, refusal);
                }
            } catch (Exception e) {
                accepted.completeExceptionally(e);
            }
        });
        client = device.connect(listener.localAddress(), new QpInit(clientPd, 8, 8, 1, (q, wc) -> clientWc.add(wc)),
                conReq, (q, ev) -> clientEv.add(ev));
        CmEvent up = clientEv.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertNotNull(up, "no ESTABLISHED");
        assertEquals(CmEvent.Type.ESTABLISHED, up.type(), up.toString());
        server = accepted.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        byte[] req = seen.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        System.out.println("IB CM private data: connect request " + req.length + " bytes, initiator's ESTABLISHED "
                + up.privateData().length + " bytes");
        assertEquals(56, req.length);
        assertEquals(196, up.privateData().length);
        assertTrue(startsWith(req, conReq) && zeroFrom(req, conReq.length), "connect request private data");
        assertTrue(startsWith(up.privateData(), conRsp) && zeroFrom(up.privateData(), conRsp.length));

        BlockingQueue<CmEvent> ev2 = new LinkedBlockingQueue<>();
        QueuePair refused = device.connect(listener.localAddress(), new QpInit(clientPd, 8, 8, 1, (q, wc) -> { }),
                null, (q, ev) -> ev2.add(ev));
        try {
            CmEvent no = ev2.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertNotNull(no, "no REJECTED");
            System.out.println("IB CM reject: " + no + ", " + no.privateData().length + " bytes");
            assertEquals(CmEvent.Type.REJECTED, no.type(), no.toString());
            assertEquals(Errno.ECONNREFUSED, no.status());
            assertEquals(148, no.privateData().length);
            assertTrue(startsWith(no.privateData(), refusal) && zeroFrom(no.privateData(), refusal.length));
        } finally {
            refused.close();
        }
    }

    /**
     * SEND_WITH_INV's success path on real verbs. A region from register() cannot be
     * invalidated remotely (an ibv_reg_mr registration; the conformance suite checks that
     * refusal), so the server binds a type-2 memory window, as Linux's RTRS client
     * exposes its read buffers through fast-registered regions. The client writes through
     * the window, then invalidates it with an empty SEND_WITH_INV into a zero-length RECV,
     * which reports the window's rkey (so invalidate_rkey went out in host order and
     * IBV_WC_WITH_INV was decoded); a write through the dead window is refused.
     */
    @Test
    void sendWithInvalidateKillsAMemoryWindowAndTheRecvReportsItsRkey() throws Exception {
        MemoryRegion rbuf = region(serverPd, 64);
        connect(List.of(new RecvWr(1, List.of()), new RecvWr(2, List.of(Sge.whole(rbuf)))));
        ByteBuffer windowed = ByteBuffer.allocateDirect(4096);
        try (VerbsNative.Window w = VerbsNative.bind(server, windowed)) {
            // the bind is posted unsignaled; a SEND behind it on the same send queue completes after it ran
            MemoryRegion crecv = region(clientPd, 64);
            client.postRecv(new RecvWr(50, List.of(Sge.whole(crecv))));
            server.postSend(SendWr.send(51, List.of(new Sge(rbuf, 0, 4))));
            assertEquals(WcStatus.SUCCESS, next(serverWc).status(), "the SEND behind the window's bind");
            assertEquals(50, next(clientWc).wrId());

            MemoryRegion src = region(clientPd, 4096);
            byte[] data = "written through a memory window".getBytes(StandardCharsets.US_ASCII);
            src.buffer().put(0, data);
            client.postSend(SendWr.write(60, List.of(new Sge(src, 0, data.length)), w.address(), w.rkey()));
            WorkCompletion wrote = next(clientWc);
            assertEquals(WcStatus.SUCCESS, wrote.status(), "write through the window: " + wrote);
            byte[] landed = new byte[data.length];
            windowed.get(0, landed);
            assertEquals(new String(data, StandardCharsets.US_ASCII), new String(landed, StandardCharsets.US_ASCII));

            // empty SEND_WITH_INV into the zero-length RECV: Linux's RTRS server answers a read so
            client.postSend(SendWr.sendWithInv(61, List.of(), w.rkey()));
            assertEquals(WcStatus.SUCCESS, next(clientWc).status());
            WorkCompletion rc = next(serverWc);
            assertEquals(WcStatus.SUCCESS, rc.status(), rc.toString());
            assertEquals(1, rc.wrId());
            assertEquals(WcOpcode.RECV, rc.opcode());
            assertEquals(0, rc.byteLen());
            assertTrue(rc.withInv(), "IBV_WC_WITH_INV not reported: " + rc);
            assertEquals(w.rkey(), rc.invalidatedRkey(), "the invalidated rkey as the adapter reports it");
            assertFalse(rc.hasImm());

            client.postSend(SendWr.write(62, List.of(new Sge(src, 0, data.length)), w.address(), w.rkey()));
            assertEquals(WcStatus.REM_ACCESS_ERR, next(clientWc).status(), "the invalidated window refuses writes");
        }
    }

    private static boolean startsWith(byte[] data, byte[] prefix) {
        return data.length >= prefix.length && java.util.Arrays.equals(prefix, java.util.Arrays.copyOf(data, prefix.length));
    }

    private static boolean zeroFrom(byte[] data, int from) {
        for (int i = from; i < data.length; i++) {
            if (data[i] != 0) {
                return false;
            }
        }
        return true;
    }

    @Test
    void sendRecvWriteReadAndImmediates() throws Exception {
        MemoryRegion sbuf = region(serverPd, 4096);
        MemoryRegion cbuf = region(clientPd, 4096);
        connect(List.of(new RecvWr(1, List.of(new Sge(sbuf, 0, 64))),
                new RecvWr(2, List.of(new Sge(sbuf, 64, 64))),
                new RecvWr(3, List.of(new Sge(sbuf, 128, 64)))));

        cbuf.buffer().put(0, "hello rxe".getBytes(StandardCharsets.US_ASCII));
        client.postSend(SendWr.send(10, List.of(new Sge(cbuf, 0, 9))));
        WorkCompletion sent = next(clientWc);
        assertEquals(new WorkCompletion(10, WcStatus.SUCCESS, WcOpcode.SEND, 9, false, 0), sent);
        WorkCompletion got = next(serverWc);
        assertEquals(1, got.wrId());
        assertEquals(WcOpcode.RECV, got.opcode());
        assertEquals(9, got.byteLen());
        byte[] b = new byte[9];
        sbuf.buffer().get(0, b);
        assertEquals("hello rxe", new String(b, StandardCharsets.US_ASCII));

        client.postSend(SendWr.sendWithImm(11, List.of(new Sge(cbuf, 0, 4)), 0x12345678));
        assertTrue(next(clientWc).ok());
        got = next(serverWc);
        assertEquals(2, got.wrId());
        assertTrue(got.hasImm());
        assertEquals(0x12345678, got.imm());

        // RDMA WRITE (unsignaled, then a signaled one retires it) into the server's region
        cbuf.buffer().put(1000, "written".getBytes(StandardCharsets.US_ASCII));
        client.postSend(SendWr.write(12, List.of(new Sge(cbuf, 1000, 7)), sbuf.address() + 2000, sbuf.rkey()).unsignaled());
        client.postSend(SendWr.write(13, List.of(new Sge(cbuf, 1000, 7)), sbuf.address() + 3000, sbuf.rkey()));
        WorkCompletion w = next(clientWc);
        assertEquals(13, w.wrId(), "only the signaled write completes");
        assertEquals(WcOpcode.RDMA_WRITE, w.opcode());
        sbuf.buffer().get(2000, b, 0, 7);
        assertEquals("written", new String(b, 0, 7, StandardCharsets.US_ASCII));

        // RDMA READ back from the server into another place of the client's region
        client.postSend(SendWr.read(14, List.of(new Sge(cbuf, 3000, 7)), sbuf.address() + 3000, sbuf.rkey()));
        WorkCompletion r = next(clientWc);
        assertEquals(WcOpcode.RDMA_READ, r.opcode());
        assertTrue(r.ok());
        cbuf.buffer().get(3000, b, 0, 7);
        assertEquals("written", new String(b, 0, 7, StandardCharsets.US_ASCII));

        // WRITE_WITH_IMM consumes a RECV and delivers only the immediate
        client.postSend(SendWr.writeWithImm(15, List.of(new Sge(cbuf, 0, 5)), sbuf.address() + 512, sbuf.rkey(), 77));
        assertTrue(next(clientWc).ok());
        got = next(serverWc);
        assertEquals(3, got.wrId());
        assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, got.opcode());
        assertEquals(77, got.imm());
    }

    /**
     * What a completion handler posts waits for the end of its round (one post for the round's
     * answers), but never behind what another thread posts after it: that post takes the
     * waiting requests with it, in order. Also: nothing a handler posted is left waiting.
     */
    @Test
    void aHandlersPostsGoOutAtTheEndOfItsRoundAndBeforeAnotherThreadsLaterPost() throws Exception {
        MemoryRegion sbuf = region(serverPd, 4096);
        MemoryRegion cbuf = region(clientPd, 4096);
        CompletableFuture<Void> hookDone = new CompletableFuture<>();
        serverHook = (qp, wc) -> {
            if (wc.opcode() != WcOpcode.RECV) {
                return;
            }
            try {
                qp.postSend(SendWr.sendWithImm(100, List.of(new Sge(sbuf, 0, 8)), 1));
                if (wc.wrId() == 1) {
                    Thread other = new Thread(() -> {
                        try {
                            qp.postSend(SendWr.sendWithImm(101, List.of(new Sge(sbuf, 0, 8)), 2));
                        } catch (RdmaException e) {
                            hookDone.completeExceptionally(e);
                        }
                    });
                    other.start();
                    other.join();
                }
                hookDone.complete(null);
            } catch (RdmaException | InterruptedException e) {
                hookDone.completeExceptionally(e);
            }
        };
        connect(List.of(new RecvWr(1, List.of(new Sge(sbuf, 0, 64))), new RecvWr(2, List.of(new Sge(sbuf, 64, 64)))));
        for (int i = 0; i < 3; i++) {
            client.postRecv(new RecvWr(10 + i, List.of(new Sge(cbuf, 64 * i, 64))));
        }
        client.postSend(SendWr.send(50, List.of(new Sge(cbuf, 1024, 8))));
        assertEquals(List.of(1, 2), receivedImms(3), "the handler's send first, then the other thread's");
        hookDone.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);

        // a second request: the handler's lone post goes out with the end of its round
        client.postSend(SendWr.send(51, List.of(new Sge(cbuf, 1024, 8))));
        assertEquals(List.of(1), receivedImms(2));
    }

    /**
     * A handler's kill and rebind of the same window wait in one round's chain: a provider reads
     * the window's current key when a bind is posted (rxe's kernel checks it), so the second
     * bind must see the first one's key; the new key then works and the old one is dead.
     */
    @Test
    void aWindowKilledAndReboundInOneRoundTakesItsNextKeys() throws Exception {
        MemoryRegion sbuf = region(serverPd, 4096);
        MemoryRegion cbuf = region(clientPd, 4096);
        CompletableFuture<Integer> rebound = new CompletableFuture<>();
        serverHook = (qp, wc) -> {
            if (wc.opcode() != WcOpcode.RECV) {
                return;
            }
            try {
                qp.postInvalidate(20, sbuf);
                rebound.complete(qp.postReregister(21, sbuf));
            } catch (RdmaException e) {
                rebound.completeExceptionally(e);
            }
        };
        connect(List.of(new RecvWr(1, List.of(new Sge(sbuf, 0, 64)))));
        int first = sbuf.rkey();
        client.postSend(SendWr.send(50, List.of(new Sge(cbuf, 1024, 8))));
        assertTrue(next(clientWc).ok(), "the client's send");
        int key = rebound.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertEquals(1, next(serverWc).wrId(), "the RECV");
        WorkCompletion inv = next(serverWc);
        assertEquals(20, inv.wrId());
        assertTrue(inv.ok(), "the kill completes: " + inv);
        assertNotEquals(first, key);
        assertEquals(key, sbuf.rkey());

        cbuf.buffer().put(0, "rebound".getBytes(StandardCharsets.US_ASCII));
        client.postSend(SendWr.write(51, List.of(new Sge(cbuf, 0, 7)), sbuf.address() + 100, key));
        WorkCompletion w = next(clientWc);
        assertTrue(w.ok(), "a write under the new key: " + w);
        byte[] b = new byte[7];
        sbuf.buffer().get(100, b);
        assertEquals("rebound", new String(b, StandardCharsets.US_ASCII));
        assertEquals(QpState.RTS, server.state(), "no bind failed on the server's queue pair");
    }

    /**
     * A bind names the key it replaces as the provider counted it, not what the window holds:
     * on rxe the kernel runs a rebind and the answer inside the post, so the client's next
     * request on the chunk, and the kill another thread posts for it, can come before the
     * posting thread stored the new key in the window. With the stale key the kill failed
     * (IBV_WC_MW_BIND_ERR) and the connection with it (docs/perf.md run 16).
     */
    @Test
    void aKillAfterARebindWhoseKeyWasNotYetStoredStillKillsTheRightKey() throws Exception {
        MemoryRegion sbuf = region(serverPd, 4096);
        MemoryRegion cbuf = region(clientPd, 4096);
        BlockingQueue<Integer> rebound = new LinkedBlockingQueue<>();
        serverHook = (qp, wc) -> {
            if (wc.opcode() != WcOpcode.RECV) {
                return;
            }
            try {
                qp.postInvalidate(20 + wc.wrId(), sbuf);
                rebound.add(qp.postReregister(30 + wc.wrId(), sbuf));
            } catch (RdmaException e) {
                rebound.add(0);
            }
        };
        connect(List.of(new RecvWr(1, List.of(new Sge(sbuf, 0, 64))), new RecvWr(2, List.of(new Sge(sbuf, 64, 64)))));
        client.postSend(SendWr.send(50, List.of(new Sge(cbuf, 1024, 8))));
        assertTrue(next(clientWc).ok(), "the client's first send");
        int key = next(rebound);
        assertEquals(1, next(serverWc).wrId(), "the first RECV");
        assertTrue(next(serverWc).ok(), "the first kill");
        // the window holds the key before the rebind's, as after a post whose thread has not stored yet
        VerbsNative.staleWindowKey(sbuf, key);

        client.postSend(SendWr.send(51, List.of(new Sge(cbuf, 1024, 8))));
        assertTrue(next(clientWc).ok(), "the client's second send");
        int next = next(rebound);
        assertEquals(2, next(serverWc).wrId(), "the second RECV");
        WorkCompletion kill = next(serverWc);
        assertEquals(22, kill.wrId());
        assertTrue(kill.ok(), "the second kill names the key the rebind gave: " + kill);
        assertNotEquals(key, next);

        assertEquals(QpState.RTS, server.state(), "no bind failed on the server's queue pair");
        cbuf.buffer().put(0, "rebound".getBytes(StandardCharsets.US_ASCII));
        client.postSend(SendWr.write(52, List.of(new Sge(cbuf, 0, 7)), sbuf.address() + 100, next));
        WorkCompletion w = next(clientWc);
        assertTrue(w.ok(), "a write under the second rebind's key: " + w);
        byte[] b = new byte[7];
        sbuf.buffer().get(100, b);
        assertEquals("rebound", new String(b, StandardCharsets.US_ASCII));
    }

    /**
     * Why memory.windows is off on rxe by default. A kill posted behind a SEND the peer cannot take
     * yet (no RECV: RNR NAKs until it posts one) runs at once, a local operation, while the SEND
     * waits. When rxe retries the SEND it rewinds its send queue to the oldest request not
     * acknowledged and runs what follows again (rxe_requester after req_retry: a local operation
     * already done is not skipped), the kill too, which then names a key the window no longer
     * has. Seen here: 6.1 stops retrying and the queue pair hangs with nothing completed, 7.3
     * moves it to ERROR (the SEND flushed) within the 2 s, and the connection with it. This pins the kernel's behaviour, not ours: when it passes a window
     * kill cleanly, auto may bind windows on rxe again.
     */
    @Test
    void onRxeAKillWindowBehindASendRetriedAfterAnRnrNakBreaksTheConnection() throws Exception {
        reopen(DisniSettings.MemoryWindows.ON);
        List<WorkCompletion> got = sendThenKillWhileThePeerHasNoRecv();
        boolean clean = got.size() == 2 && got.get(0).ok() && got.get(1).ok() && server.state() == QpState.RTS;
        assertFalse(clean, "rxe passed a window kill behind a retried SEND: " + got);
    }

    /**
     * The default on rxe: the chunk is re-registered, and what the kill puts on the send queue is a
     * zero-length RDMA WRITE, which a retry sends again harmlessly: the SEND and the kill complete,
     * in order, once the peer posts its RECV.
     */
    @Test
    void byDefaultOnRxeAKillBehindASendRetriedAfterAnRnrNakCompletes() throws Exception {
        reopen(DisniSettings.MemoryWindows.AUTO);
        assertFalse(device.memoryWindows(), "auto resolves to re-registration on rxe (" + info.name() + ")");
        List<WorkCompletion> got = sendThenKillWhileThePeerHasNoRecv();
        assertEquals(2, got.size(), "the SEND and the kill: " + got);
        assertTrue(got.get(0).ok() && got.get(0).wrId() == 60, "the SEND: " + got);
        assertTrue(got.get(1).ok() && got.get(1).wrId() == 61, "the kill: " + got);
        assertEquals(QpState.RTS, server.state());
        assertEquals(10, next(clientWc).wrId(), "the peer's RECV took the SEND");
    }

    /**
     * By default on rxe, invalidateNow kills a chunk's key by switching its registration's remote
     * access off where the kernel can (rxe's rereg_user_mr, Linux 6.5 and later), and a
     * re-registration switches it back on under the same key. Before 6.5 the kernel refuses the
     * change (EOPNOTSUPP) and the provider deregisters and registers anew, under a new key. Either
     * way a write under the key given lands, and one after the next kill is refused.
     */
    @Test
    void byDefaultOnRxeInvalidateNowSwitchesRemoteAccessWhereTheKernelCan() throws Exception {
        reopen(DisniSettings.MemoryWindows.AUTO);
        String release = System.getProperty("os.version");
        boolean kernelCan = kernelAtLeast(release, 6, 5);
        MemoryRegion sbuf = region(serverPd, 4096);
        MemoryRegion cbuf = region(clientPd, 4096);
        connect(List.of());
        int old = sbuf.rkey();
        assertTrue(server.invalidateNow(sbuf), "no window on rxe by default: killed in the call");
        assertFalse(sbuf.valid());
        assertEquals(kernelCan, device.accessToggle(), "access switched in place on Linux " + release);
        int fresh = server.postReregister(70, sbuf);
        assertTrue(sbuf.valid());
        if (kernelCan) {
            assertEquals(old, fresh, "the same key back on Linux " + release);
        } else {
            assertNotEquals(old, fresh, "a new registration on Linux " + release);
        }
        cbuf.buffer().put(0, (byte) 0x5A);
        client.postSend(SendWr.write(71, List.of(new Sge(cbuf, 0, 1)), sbuf.address() + 100, fresh));
        WorkCompletion landed = next(clientWc);
        assertEquals(71, landed.wrId());
        assertTrue(landed.ok(), "a write under the key given: " + landed);
        assertEquals((byte) 0x5A, sbuf.buffer().get(100));
        assertTrue(server.invalidateNow(sbuf));
        client.postSend(SendWr.write(72, List.of(new Sge(cbuf, 0, 1)), sbuf.address(), fresh));
        WorkCompletion refused = next(clientWc);
        assertEquals(72, refused.wrId());
        assertEquals(WcStatus.REM_ACCESS_ERR, refused.status(), "a write after the next kill: " + refused);
    }

    /**
     * memory.windows=off re-registers on rxe whatever the kernel can: a new key per kill, the
     * old one refused (the escape hatch from the access switch, and the bench's A/B against it).
     */
    @Test
    void offReRegistersOnRxeWhateverTheKernel() throws Exception {
        reopen(DisniSettings.MemoryWindows.OFF);
        assertFalse(device.accessToggle(), "off: no access switch on Linux " + System.getProperty("os.version"));
        MemoryRegion sbuf = region(serverPd, 4096);
        MemoryRegion cbuf = region(clientPd, 4096);
        connect(List.of());
        int old = sbuf.rkey();
        assertTrue(server.invalidateNow(sbuf), "no window: killed in the call");
        int fresh = server.postReregister(73, sbuf);
        assertNotEquals(old, fresh, "a new registration");
        client.postSend(SendWr.write(74, List.of(new Sge(cbuf, 0, 1)), sbuf.address(), old));
        WorkCompletion refused = next(clientWc);
        assertEquals(74, refused.wrId());
        assertEquals(WcStatus.REM_ACCESS_ERR, refused.status(), "the old key after re-registration: " + refused);
    }

    /** Whether a kernel release ("6.1.0-57-amd64", "7.3-amd64") is at least major.minor. */
    static boolean kernelAtLeast(String release, int major, int minor) {
        String[] v = release.split("[.-]");
        int ma = Integer.parseInt(v[0]);
        int mi = Integer.parseInt(v[1]);
        return ma > major || ma == major && mi >= minor;
    }

    /**
     * With windows, invalidateNow leaves the region alone: its kill is a bind on the send queue,
     * posted in order with the answers (the conformance suite, at rxe's default, covers the
     * other half: the key dead when the call returns).
     */
    @Test
    void withWindowsInvalidateNowLeavesTheKillToTheSendQueue() throws Exception {
        MemoryRegion sbuf = region(serverPd, 4096);
        connect(List.of());
        int key = sbuf.rkey();
        assertFalse(server.invalidateNow(sbuf), "a region with a window is killed by a bind");
        assertTrue(sbuf.valid());
        assertEquals(key, sbuf.rkey());
        server.postInvalidate(62, sbuf);
        WorkCompletion inv = next(serverWc);
        assertEquals(62, inv.wrId());
        assertTrue(inv.ok(), "the posted kill: " + inv);
        assertFalse(sbuf.valid());
    }

    /** This test's device again, with {@code windows}. */
    private void reopen(DisniSettings.MemoryWindows windows) throws Exception {
        device.close();
        device = DisniDevice.open(info, new DisniSettings((int) WAIT.toMillis(), 1, windows));
        serverPd = device.allocPd();
        clientPd = device.allocPd();
    }

    /**
     * The server SENDs to a client with no RECV posted (RNR NAKs, retried forever), then kills a
     * region's rkey on the same queue pair; 2 s later the client posts a RECV. What completed on
     * the server within 10 s more.
     */
    private List<WorkCompletion> sendThenKillWhileThePeerHasNoRecv() throws Exception {
        MemoryRegion sbuf = region(serverPd, 4096);
        MemoryRegion cbuf = region(clientPd, 4096);
        connect(List.of());
        String before = counters();
        server.postSend(SendWr.send(60, List.of(new Sge(sbuf, 0, 8))));
        server.postInvalidate(61, sbuf);
        List<WorkCompletion> got = new java.util.ArrayList<>();
        WorkCompletion early = serverWc.poll(2, TimeUnit.SECONDS);
        if (early != null) {
            got.add(early);
        }
        String rnr = counters();
        try {
            client.postRecv(new RecvWr(10, List.of(new Sge(cbuf, 0, 64))));
        } catch (RdmaException e) {
            // 7.3: the server's queue pair failed already and the disconnect reached the client
            System.out.println("RNR then kill: the client's RECV refused (" + e.getMessage() + ")");
        }
        for (int i = 0; i < 10 && got.size() < 2; i++) {
            WorkCompletion wc = serverWc.poll(1, TimeUnit.SECONDS);
            if (wc != null) {
                got.add(wc);
            }
        }
        System.out.println("RNR then kill: " + got + ", server " + server.state() + "; rxe counters before: " + before
                + "; 2 s after the posts: " + rnr + "; at the end: " + counters());
        return got;
    }

    /** rxe's non-zero counters, for the RNR cases' output. */
    private String counters() {
        StringBuilder b = new StringBuilder();
        java.io.File dir = new java.io.File("/sys/class/infiniband/" + info.name() + "/ports/1/hw_counters");
        String[] names = dir.list();
        if (names == null) {
            return "(none)";
        }
        java.util.Arrays.sort(names);
        for (String n : names) {
            try {
                String v = java.nio.file.Files.readString(new java.io.File(dir, n).toPath()).trim();
                if (!v.equals("0")) {
                    b.append(n).append('=').append(v).append(' ');
                }
            } catch (java.io.IOException e) {
                b.append(n).append("=? ");
            }
        }
        return b.toString();
    }

    /** The immediates of the RECVs among the client's next {@code n} completions, in arrival order; its sends must be ok. */
    private List<Integer> receivedImms(int n) throws InterruptedException {
        List<Integer> imms = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            WorkCompletion got = next(clientWc);
            assertTrue(got.ok(), got.toString());
            if (got.opcode() == WcOpcode.RECV) {
                imms.add(got.imm());
            }
        }
        return imms;
    }

    @Test
    void invalidatedRkeyIsRefusedAndTheConnectionFails() throws Exception {
        MemoryRegion sbuf = region(serverPd, 4096);
        MemoryRegion cbuf = region(clientPd, 4096);
        connect(List.of(new RecvWr(1, List.of(new Sge(sbuf, 0, 64)))));
        int old = sbuf.rkey();
        sbuf.invalidate();
        assertFalse(sbuf.valid());
        client.postSend(SendWr.write(20, List.of(new Sge(cbuf, 0, 8)), sbuf.address(), old));
        WorkCompletion wc = next(clientWc);
        assertEquals(20, wc.wrId());
        assertEquals(WcStatus.REM_ACCESS_ERR, wc.status());
        assertEquals(QpState.ERROR, client.state());
        assertEquals(CmEvent.Type.DISCONNECTED, next(serverEv).type());
        WorkCompletion flushed = next(serverWc);
        assertEquals(1, flushed.wrId());
        assertEquals(WcStatus.WR_FLUSH_ERR, flushed.status());
        assertThrows(RdmaException.class, () -> client.postSend(SendWr.send(21, List.of())));

        int fresh = sbuf.reregister();
        assertTrue(sbuf.valid());
        if (device.accessToggle()) {
            assertEquals(old, fresh, "rxe from Linux 6.5: the remote access switched back on, the same key");
        } else {
            assertNotEquals(old, fresh);
        }
    }

    @Test
    void disconnectFlushesAndCloseIsIdempotent() throws Exception {
        MemoryRegion sbuf = region(serverPd, 4096);
        connect(List.of(new RecvWr(1, List.of(new Sge(sbuf, 0, 64))), new RecvWr(2, List.of(new Sge(sbuf, 64, 64)))));
        client.disconnect();
        assertEquals(CmEvent.Type.DISCONNECTED, next(serverEv).type());
        assertEquals(WcStatus.WR_FLUSH_ERR, next(serverWc).status());
        assertEquals(WcStatus.WR_FLUSH_ERR, next(serverWc).status());
        RdmaException e = assertThrows(RdmaException.class, () -> server.postRecv(new RecvWr(3, List.of())));
        assertEquals(Errno.ENOTCONN, e.errno());
        client.close();
        client.close();
        assertEquals(QpState.CLOSED, client.state());
    }

    @Test
    void deviceCloseFlushesQueuePairsAndStopsItsThreads() throws Exception {
        MemoryRegion sbuf = region(serverPd, 4096);
        connect(List.of(new RecvWr(7, List.of(new Sge(sbuf, 0, 64)))));
        device.close();
        assertEquals(CmEvent.Type.DEVICE_REMOVAL, next(serverEv).type());
        assertEquals(CmEvent.Type.DEVICE_REMOVAL, next(clientEv).type());
        WorkCompletion wc = next(serverWc);
        assertEquals(7, wc.wrId());
        assertEquals(WcStatus.WR_FLUSH_ERR, wc.status());
        assertEquals(QpState.ERROR, server.state(), "in ERROR until its owner closes it");
        server.close();
        assertEquals(QpState.CLOSED, server.state());
        assertThrows(RdmaException.class, device::allocPd);
        assertTrue(Thread.getAllStackTraces().keySet().stream()
                .noneMatch(t -> t.getName().startsWith("rdma-disni-") && t.getName().contains("-" + info.name())),
                "device threads are gone");
    }

    /**
     * {@code completion.threads} 2: the device's queue pairs go to the thread with the fewest, so
     * a client and the server it reaches are on different threads; each queue pair's completions
     * all come on its own thread, and closing the device ends both.
     */
    @Test
    void twoCompletionThreadsSplitTheQueuePairsAndEachKeepsItsOwn() throws Exception {
        DisniDevice two = DisniDevice.open(info, new DisniSettings((int) WAIT.toMillis(), 2));
        try {
            ProtectionDomain pd = two.allocPd();
            MemoryRegion buf = region(pd, 4096);
            Map<String, Set<String>> threadsOf = new ConcurrentHashMap<>();
            BlockingQueue<WorkCompletion> wcs = new LinkedBlockingQueue<>();
            Function<String, CompletionHandler> recording = name -> (qp, wc) -> {
                threadsOf.computeIfAbsent(name, k -> ConcurrentHashMap.newKeySet())
                        .add(Thread.currentThread().getName());
                wcs.add(wc);
            };
            BlockingQueue<QueuePair> servers = new LinkedBlockingQueue<>();
            AtomicInteger n = new AtomicInteger();
            CmListener l = two.listen(new InetSocketAddress(RdmaTestEnv.address(), 0), req -> {
                try {
                    int i = n.incrementAndGet();
                    QueuePair qp = req.accept(new QpInit(pd, 16, 16, 1, recording.apply("server" + i)), (q, ev) -> { });
                    qp.postRecv(new RecvWr(100 + i, List.of(new Sge(buf, 64 * i, 64))));
                    servers.add(qp);
                } catch (RdmaException e) {
                    throw new IllegalStateException(e);
                }
            });
            for (int i = 1; i <= 2; i++) {
                BlockingQueue<CmEvent> ev = new LinkedBlockingQueue<>();
                QueuePair c = two.connect(l.localAddress(), new QpInit(pd, 16, 16, 1, recording.apply("client" + i)),
                        new byte[] {1}, (q, e) -> ev.add(e));
                assertEquals(CmEvent.Type.ESTABLISHED, next(ev).type());
                next(servers);
                c.postSend(SendWr.send(i, List.of(new Sge(buf, 1024, 8))));
                // the client's SEND and the server's RECV, in either order
                WorkCompletion a = next(wcs);
                WorkCompletion b = next(wcs);
                assertTrue(a.ok() && b.ok(), a + " " + b);
                assertEquals(Set.of((long) i, 100L + i), Set.of(a.wrId(), b.wrId()));
            }
            String first = "rdma-disni-cq-" + info.name();
            String second = first + "-1";
            // created in turn, each to the thread with the fewest: client1, server1, client2, server2
            assertEquals(Map.of("client1", Set.of(first), "server1", Set.of(second),
                    "client2", Set.of(first), "server2", Set.of(second)), threadsOf);
        } finally {
            two.close();
        }
        assertTrue(Thread.getAllStackTraces().keySet().stream()
                .noneMatch(t -> t.getName().startsWith("rdma-disni-cq-" + info.name() + "-")),
                "the second completion thread is gone");
    }

    @Test
    void providerPublishesTheAdapterAndUnpublishesOnClose() throws Exception {
        RdmaTestEnv.device();
        BlockingQueue<String> log = new LinkedBlockingQueue<>();
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        DisniProvider provider = new DisniProvider(new SysfsScanner(Path.of("/sys/class/infiniband")),
                new DisniRuntime(), i -> DisniDevice.open(i, new DisniSettings((int) WAIT.toMillis())),
                new DeviceListener() {
                    @Override
                    public void deviceAdded(RdmaDevice d) {
                        if (d.name().equals(info.name())) { // other adapters may come and go
                            log.add("added " + d.name());
                        }
                    }

                    @Override
                    public void deviceRemoved(RdmaDevice d) {
                        if (d.name().equals(info.name())) {
                            log.add("removed " + d.name());
                        }
                    }
                }, scheduler, Duration.ofMillis(200));
        try {
            provider.start();
            assertEquals("added " + info.name(), next(log));
            assertTrue(provider.status().active(), provider.status().line());
        } finally {
            scheduler.submit(provider::close).get();
            scheduler.shutdown();
            assertTrue(scheduler.awaitTermination(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        }
        assertEquals("removed " + info.name(), next(log));
    }
}

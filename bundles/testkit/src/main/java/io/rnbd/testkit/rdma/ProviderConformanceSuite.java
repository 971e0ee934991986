package io.rnbd.testkit.rdma;

import java.util.Arrays;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.CmPrivateData;
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

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The conformance suite every RDMA provider must pass: extend it, open devices in
 * {@link #openDevice(int)} and remove them in {@link #removeDevice(RdmaDevice)}.
 *
 * <p>Device 0 is the passive (listening) side, device 1 the active side; they may be
 * the same adapter where the provider supports loopback. Everything the test opens is
 * closed after each test, devices last.
 */
public abstract class ProviderConformanceSuite {
    protected static final Duration TIMEOUT = Endpoint.TIMEOUT;
    private static final int QUEUE = 1024;

    private final List<RdmaDevice> devices = new ArrayList<>();
    private final List<AutoCloseable> resources = new ArrayList<>();

    /** Open (or find) device {@code index}: 0 listens, 1 connects. Called once per test and index. */
    protected abstract RdmaDevice openDevice(int index) throws Exception;

    /** Take the device away as its provider would (unregister, then flush and free). */
    protected abstract void removeDevice(RdmaDevice device) throws Exception;

    /** Whether {@link #removeDevice} really removes the device (hardware providers may not). */
    protected boolean canRemoveDevices() {
        return true;
    }

    /**
     * Whether the initiator's {@link CmEvent.Type#REJECTED} carries the rejecter's reason as
     * its status. The IB CM carries only its own reject reason (28, consumer defined): such a
     * provider reports {@link Errno#ECONNREFUSED}, and protocols put the reason in the
     * reject's private data (as Linux's RTRS does with CON_RSP's errno).
     */
    protected boolean carriesRejectReason() {
        return true;
    }

    /**
     * Whether a peer's SEND_WITH_INV can invalidate a region from
     * {@link ProtectionDomain#register}. On adapters (and rxe) only fast-registered regions
     * and memory windows can be remotely invalidated: a SEND_WITH_INV naming a registered
     * region's rkey fails at the receiver like one naming an unknown rkey.
     */
    protected boolean canInvalidateRegisteredRegionsRemotely() {
        return true;
    }

    /**
     * Whether {@link MemoryRegion#reregister} (and a re-registration through a queue pair) gives
     * {@code region} back the key its invalidation killed, as rdma-disni does on rxe by switching
     * the registration's remote access off and on. The key is refused in between either way; a
     * provider that gives it back must make it work again, one that does not must keep refusing it.
     */
    protected boolean reregistrationKeepsTheKey(MemoryRegion region) {
        return false;
    }

    /**
     * The completion status a SEND ends in when its SGE names a region of another protection
     * domain. This is the device's answer, not the provider's: a provider reports the status
     * its device gives and must leave the queue pair in ERROR (that much the suite checks for
     * every provider). The verbs specification says local protection error, which a software
     * provider gives; Linux's rxe gave it up to 6.1 and from 6.12 on moves the queue pair to
     * ERROR in its requester and flushes the failing request with the rest (WR_FLUSH_ERR).
     * A device may answer either on different kernels: say which, per kernel.
     */
    protected Set<WcStatus> foreignRegionSendStatus() {
        return Set.of(WcStatus.LOC_PROT_ERR);
    }

    /** Where device 0 listens; port 0 lets the provider pick a free one. */
    protected InetSocketAddress listenAddress(RdmaDevice device) {
        return new InetSocketAddress(device.addresses().get(0), 0);
    }

    @AfterEach
    final void closeEverything() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
        resources.clear();
        for (RdmaDevice d : devices) {
            if (d != null) {
                removeDevice(d);
            }
        }
        devices.clear();
    }

    // ------------------------------------------------------------------ fixtures

    protected final RdmaDevice device(int index) throws Exception {
        while (devices.size() <= index) {
            devices.add(null);
        }
        if (devices.get(index) == null) {
            devices.set(index, openDevice(index));
        }
        return devices.get(index);
    }

    protected final <T extends AutoCloseable> T track(T resource) {
        resources.add(resource);
        return resource;
    }

    protected final ProtectionDomain pd(RdmaDevice device) throws RdmaException {
        return track(device.allocPd());
    }

    protected static MemoryRegion mr(ProtectionDomain pd, int size, Access... access) throws RdmaException {
        return pd.register(ByteBuffer.allocateDirect(size), access.length == 0 ? Access.all() : Access.of(access));
    }

    protected static void fill(MemoryRegion mr, int offset, byte[] data) {
        mr.buffer().put(offset, data);
    }

    protected static byte[] bytes(MemoryRegion mr, int offset, int len) {
        byte[] b = new byte[len];
        mr.buffer().get(offset, b);
        return b;
    }

    protected static byte[] pattern(int len, int seed) {
        byte[] b = new byte[len];
        for (int i = 0; i < len; i++) {
            b[i] = (byte) (seed * 31 + i * 7);
        }
        return b;
    }

    /** A connected pair: server side accepted on device 0, client side on device 1. */
    protected final class Pair {
        public final Endpoint server = new Endpoint("server");
        public final Endpoint client = new Endpoint("client");
        public ProtectionDomain serverPd;
        public ProtectionDomain clientPd;
        public CmListener listener;
        public byte[] receivedPrivateData;
    }

    /**
     * Listen on device 0, connect from device 1 and wait until both sides are established.
     * {@code onAccepted} runs on the provider thread right after accept (post RECVs there).
     */
    protected final Pair connect(Consumer<Pair> onAccepted, byte[] privateData) throws Exception {
        Pair p = new Pair();
        RdmaDevice sd = device(0);
        RdmaDevice cd = device(1);
        p.serverPd = pd(sd);
        p.clientPd = pd(cd);
        CompletableFuture<Void> accepted = new CompletableFuture<>();
        p.listener = track(sd.listen(listenAddress(sd), req -> {
            try {
                p.receivedPrivateData = req.privateData();
                p.server.qp(req.accept(new QpInit(p.serverPd, QUEUE, QUEUE, 4, p.server), p.server));
                onAccepted.accept(p);
                accepted.complete(null);
            } catch (Throwable t) {
                accepted.completeExceptionally(t);
            }
        }));
        p.client.qp(track(cd.connect(target(p.listener), new QpInit(p.clientPd, QUEUE, QUEUE, 4, p.client),
                privateData, p.client)));
        accepted.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        track(p.server.qp());
        p.client.nextEvent(CmEvent.Type.ESTABLISHED);
        p.server.nextEvent(CmEvent.Type.ESTABLISHED);
        return p;
    }

    protected final Pair connect() throws Exception {
        return connect(p -> { }, null);
    }

    /** The address to connect to for {@code listener} (its device address when it listens on any). */
    protected final InetSocketAddress target(CmListener listener) {
        InetSocketAddress at = listener.localAddress();
        if (at.getAddress().isAnyLocalAddress()) {
            return new InetSocketAddress(listener.device().addresses().get(0), at.getPort());
        }
        return at;
    }

    protected static void postRecvs(Endpoint ep, MemoryRegion mr, int count, int size) {
        try {
            for (int i = 0; i < count; i++) {
                ep.qp().postRecv(new RecvWr(i, List.of(new Sge(mr, i * size, size))));
            }
        } catch (RdmaException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Server registers a remotely accessible region; returns it. */
    private MemoryRegion serverRegion(Pair p, int size, Access... access) throws RdmaException {
        return track(mr(p.serverPd, size, access));
    }

    // ------------------------------------------------------------------ send / receive

    @Test
    void sendArrivesInPostedRecvWithLength() throws Exception {
        Pair p = connect();
        MemoryRegion rbuf = track(mr(p.serverPd, 4096));
        postRecvs(p.server, rbuf, 1, 4096);
        MemoryRegion sbuf = track(mr(p.clientPd, 4096));
        byte[] data = pattern(1000, 1);
        fill(sbuf, 0, data);
        p.client.qp().postSend(SendWr.send(7, List.of(new Sge(sbuf, 0, 1000))));
        WorkCompletion sc = p.client.nextWc(WcStatus.SUCCESS);
        assertEquals(7, sc.wrId());
        assertEquals(WcOpcode.SEND, sc.opcode());
        WorkCompletion rc = p.server.nextWc(WcStatus.SUCCESS);
        assertEquals(WcOpcode.RECV, rc.opcode());
        assertEquals(1000, rc.byteLen());
        assertFalse(rc.hasImm());
        assertArrayEquals(data, bytes(rbuf, 0, 1000));
    }

    @Test
    void manySendsCompleteAndArriveInOrder() throws Exception {
        int n = 800;
        int size = 3000;
        Pair p = connect();
        MemoryRegion rbuf = track(mr(p.serverPd, n * size));
        postRecvs(p.server, rbuf, n, size);
        MemoryRegion sbuf = track(mr(p.clientPd, n * size));
        for (int i = 0; i < n; i++) {
            int len = i % 2 == 0 ? 8 + i : size;
            fill(sbuf, i * size, pattern(len, i));
            p.client.qp().postSend(SendWr.send(1000 + i, List.of(new Sge(sbuf, i * size, len))));
        }
        for (int i = 0; i < n; i++) {
            assertEquals(1000 + i, p.client.nextWc(WcStatus.SUCCESS).wrId());
            WorkCompletion rc = p.server.nextWc(WcStatus.SUCCESS);
            assertEquals(i, rc.wrId());
            int len = i % 2 == 0 ? 8 + i : size;
            assertEquals(len, rc.byteLen());
            assertArrayEquals(pattern(len, i), bytes(rbuf, i * size, len));
        }
    }

    @Test
    void sendFromSeveralSgesIsGathered() throws Exception {
        Pair p = connect();
        MemoryRegion rbuf = track(mr(p.serverPd, 8192));
        postRecvs(p.server, rbuf, 1, 8192);
        MemoryRegion a = track(mr(p.clientPd, 4096));
        MemoryRegion b = track(mr(p.clientPd, 4096));
        fill(a, 100, pattern(3000, 1));
        fill(b, 0, pattern(2000, 2));
        p.client.qp().postSend(SendWr.send(1, List.of(new Sge(a, 100, 3000), new Sge(b, 0, 2000))));
        p.client.nextWc(WcStatus.SUCCESS);
        assertEquals(5000, p.server.nextWc(WcStatus.SUCCESS).byteLen());
        assertArrayEquals(pattern(3000, 1), bytes(rbuf, 0, 3000));
        assertArrayEquals(pattern(2000, 2), bytes(rbuf, 3000, 2000));
    }

    @Test
    void unsignaledSuccessIsSilentButLaterSignaledCompletes() throws Exception {
        Pair p = connect();
        MemoryRegion rbuf = track(mr(p.serverPd, 4096));
        postRecvs(p.server, rbuf, 4, 1024);
        MemoryRegion sbuf = track(mr(p.clientPd, 1024));
        for (int i = 0; i < 3; i++) {
            p.client.qp().postSend(SendWr.send(i, List.of(new Sge(sbuf, 0, 16))).unsignaled());
        }
        p.client.qp().postSend(SendWr.send(3, List.of(new Sge(sbuf, 0, 16))));
        assertEquals(3, p.client.nextWc(WcStatus.SUCCESS).wrId());
        for (int i = 0; i < 4; i++) {
            p.server.nextWc(WcStatus.SUCCESS);
        }
    }

    @Test
    void sendWithImmDeliversImmediateWithRecv() throws Exception {
        Pair p = connect();
        MemoryRegion rbuf = track(mr(p.serverPd, 1024));
        postRecvs(p.server, rbuf, 1, 1024);
        MemoryRegion sbuf = track(mr(p.clientPd, 1024));
        p.client.qp().postSend(SendWr.sendWithImm(1, List.of(new Sge(sbuf, 0, 10)), 0xCAFEBABE));
        p.client.nextWc(WcStatus.SUCCESS);
        WorkCompletion rc = p.server.nextWc(WcStatus.SUCCESS);
        assertEquals(WcOpcode.RECV, rc.opcode());
        assertTrue(rc.hasImm());
        assertEquals(0xCAFEBABE, rc.imm());
        assertEquals(10, rc.byteLen());
    }

    @Test
    void sendBeforeRecvIsPostedWaitsAndIsDelivered() throws Exception {
        Pair p = connect();
        MemoryRegion sbuf = track(mr(p.clientPd, 1024));
        fill(sbuf, 0, pattern(100, 5));
        p.client.qp().postSend(SendWr.send(1, List.of(new Sge(sbuf, 0, 100))));
        p.client.assertNoWcFor(Duration.ofMillis(300));
        MemoryRegion rbuf = track(mr(p.serverPd, 1024));
        postRecvs(p.server, rbuf, 1, 1024);
        p.client.nextWc(WcStatus.SUCCESS);
        assertEquals(100, p.server.nextWc(WcStatus.SUCCESS).byteLen());
        assertArrayEquals(pattern(100, 5), bytes(rbuf, 0, 100));
    }

    @Test
    void messageLargerThanRecvIsLocalLengthErrorAtReceiver() throws Exception {
        Pair p = connect();
        MemoryRegion rbuf = track(mr(p.serverPd, 1024));
        p.server.qp().postRecv(new RecvWr(1, List.of(new Sge(rbuf, 0, 16))));
        p.server.qp().postRecv(new RecvWr(2, List.of(new Sge(rbuf, 16, 16))));
        MemoryRegion sbuf = track(mr(p.clientPd, 1024));
        fill(sbuf, 0, pattern(64, 1));
        p.client.qp().postSend(SendWr.send(1, List.of(new Sge(sbuf, 0, 64))));
        WorkCompletion rc = p.server.nextWc(WcStatus.LOC_LEN_ERR);
        assertEquals(1, rc.wrId());
        assertEquals(2, p.server.nextWc(WcStatus.WR_FLUSH_ERR).wrId());
        assertNotEquals(WcStatus.SUCCESS, p.client.nextWc().status());
        assertArrayEquals(new byte[16], bytes(rbuf, 16, 16), "the next RECV buffer is untouched");
    }

    // ------------------------------------------------------------------ RDMA WRITE / READ

    @Test
    void writesAreOrderedBeforeTheFollowingSend() throws Exception {
        int n = 200;
        int chunk = 4096;
        Pair p = connect();
        MemoryRegion target = serverRegion(p, n * chunk);
        MemoryRegion rbuf = track(mr(p.serverPd, 64));
        postRecvs(p.server, rbuf, 1, 64);
        MemoryRegion src = track(mr(p.clientPd, n * chunk));
        for (int i = 0; i < n; i++) {
            fill(src, i * chunk, pattern(chunk, i));
            p.client.qp().postSend(SendWr.write(i, List.of(new Sge(src, i * chunk, chunk)),
                    target.address() + (long) i * chunk, target.rkey()));
        }
        p.client.qp().postSend(SendWr.send(n, List.of(new Sge(src, 0, 8))));
        for (int i = 0; i <= n; i++) {
            WorkCompletion wc = p.client.nextWc(WcStatus.SUCCESS);
            assertEquals(i, wc.wrId());
            assertEquals(i < n ? WcOpcode.RDMA_WRITE : WcOpcode.SEND, wc.opcode());
        }
        p.server.nextWc(WcStatus.SUCCESS);
        for (int i = 0; i < n; i++) {
            assertArrayEquals(pattern(chunk, i), bytes(target, i * chunk, chunk), "chunk " + i);
        }
    }

    @Test
    void largeWriteIsPlacedCompletely() throws Exception {
        int size = 1 << 20;
        Pair p = connect();
        MemoryRegion target = serverRegion(p, size + 4096);
        MemoryRegion src = track(mr(p.clientPd, size));
        fill(src, 0, pattern(size, 9));
        p.client.qp().postSend(SendWr.write(1, List.of(Sge.whole(src)), target.address() + 4096, target.rkey()));
        p.client.nextWc(WcStatus.SUCCESS);
        assertArrayEquals(pattern(size, 9), bytes(target, 4096, size));
        assertArrayEquals(new byte[4096], bytes(target, 0, 4096));
    }

    @Test
    void writeWithImmConsumesRecvAndDeliversImmediate() throws Exception {
        Pair p = connect();
        MemoryRegion target = serverRegion(p, 8192);
        MemoryRegion rbuf = track(mr(p.serverPd, 64));
        postRecvs(p.server, rbuf, 1, 64);
        MemoryRegion src = track(mr(p.clientPd, 8192));
        fill(src, 0, pattern(5000, 3));
        p.client.qp().postSend(SendWr.writeWithImm(1, List.of(new Sge(src, 0, 5000)), target.address() + 100,
                target.rkey(), 0x12345678));
        p.client.nextWc(WcStatus.SUCCESS);
        WorkCompletion rc = p.server.nextWc(WcStatus.SUCCESS);
        assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, rc.opcode());
        assertTrue(rc.hasImm());
        assertEquals(0x12345678, rc.imm());
        assertEquals(5000, rc.byteLen());
        assertArrayEquals(pattern(5000, 3), bytes(target, 100, 5000));
        assertArrayEquals(new byte[64], bytes(rbuf, 0, 64), "the RECV buffer is not written");
    }

    @Test
    void writeWithImmBeforeRecvWaitsForRecv() throws Exception {
        Pair p = connect();
        MemoryRegion target = serverRegion(p, 4096);
        MemoryRegion src = track(mr(p.clientPd, 4096));
        p.client.qp().postSend(SendWr.writeWithImm(1, List.of(new Sge(src, 0, 100)), target.address(),
                target.rkey(), 5));
        p.client.assertNoWcFor(Duration.ofMillis(300));
        MemoryRegion rbuf = track(mr(p.serverPd, 64));
        postRecvs(p.server, rbuf, 1, 64);
        p.client.nextWc(WcStatus.SUCCESS);
        assertEquals(5, p.server.nextWc(WcStatus.SUCCESS).imm());
    }

    @Test
    void rdmaReadFetchesRemoteMemory() throws Exception {
        Pair p = connect();
        MemoryRegion remote = serverRegion(p, 256 * 1024);
        fill(remote, 1000, pattern(200_000, 4));
        MemoryRegion local = track(mr(p.clientPd, 256 * 1024));
        p.client.qp().postSend(SendWr.read(1, List.of(new Sge(local, 10, 200_000)), remote.address() + 1000,
                remote.rkey()));
        WorkCompletion wc = p.client.nextWc(WcStatus.SUCCESS);
        assertEquals(WcOpcode.RDMA_READ, wc.opcode());
        assertEquals(200_000, wc.byteLen());
        assertArrayEquals(pattern(200_000, 4), bytes(local, 10, 200_000));
    }

    @Test
    void readsAndWritesCompleteInPostingOrder() throws Exception {
        Pair p = connect();
        MemoryRegion remote = serverRegion(p, 64 * 1024);
        MemoryRegion local = track(mr(p.clientPd, 64 * 1024));
        for (int i = 0; i < 64; i++) {
            SendWr wr = i % 3 == 0
                    ? SendWr.read(i, List.of(new Sge(local, i * 1024, 1024)), remote.address() + i * 1024L, remote.rkey())
                    : SendWr.write(i, List.of(new Sge(local, i * 1024, 1024)), remote.address() + i * 1024L,
                            remote.rkey());
            p.client.qp().postSend(wr);
        }
        for (int i = 0; i < 64; i++) {
            assertEquals(i, p.client.nextWc(WcStatus.SUCCESS).wrId());
        }
    }

    @Test
    void aChainExecutesInListOrderAsIfPostedOneByOne() throws Exception {
        int n = 48;
        // RTRS's IO shape: data written with immediate, most unsignaled, a dozen per post
        Pair p = writeInChains(n, 4096, 12, i -> i % 16 == 15, 0x1000);
        for (int i = 15; i < n; i += 16) {
            assertEquals(i, p.client.nextWc(WcStatus.SUCCESS).wrId());
        }
    }

    /**
     * A chain longer than a provider hands to its adapter in one go (DiSNI's native post takes
     * 64 WRs) still goes out whole and in order: one call, every WR executed once.
     */
    @Test
    void aChainLongerThanOneDoorbellTakesGoesOutWholeAndInOrder() throws Exception {
        int n = 150;
        Pair p = writeInChains(n, 512, n, i -> i == n - 1, 0x2000);
        assertEquals(n - 1, p.client.nextWc(WcStatus.SUCCESS).wrId(), "the chain's one signaled WR, its last");
    }

    /**
     * Writes {@code n} blocks of {@code size} bytes with immediates {@code immBase + i}, posted
     * in chains of {@code chainLen}, block i signaled when {@code signaled} says so; checks that
     * the server received them in order with their data, and returns the pair for the caller's
     * check of the client's completions.
     */
    private Pair writeInChains(int n, int size, int chainLen, java.util.function.IntPredicate signaled, int immBase)
            throws Exception {
        Pair p = connect();
        MemoryRegion remote = serverRegion(p, n * size);
        MemoryRegion rbuf = track(mr(p.serverPd, n * 64));
        postRecvs(p.server, rbuf, n, 64);
        MemoryRegion local = track(mr(p.clientPd, n * size));
        List<SendWr> chain = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            fill(local, i * size, pattern(size, i));
            SendWr wr = SendWr.writeWithImm(i, List.of(new Sge(local, i * size, size)), remote.address() + (long) i * size,
                    remote.rkey(), immBase + i);
            chain.add(signaled.test(i) ? wr : wr.unsignaled());
            if (chain.size() == chainLen || i == n - 1) {
                p.client.qp().postSend(List.copyOf(chain));
                chain.clear();
            }
        }
        for (int i = 0; i < n; i++) {
            WorkCompletion rc = p.server.nextWc(WcStatus.SUCCESS);
            assertEquals(immBase + i, rc.imm(), "immediates arrive in chain order");
            assertArrayEquals(pattern(size, i), bytes(remote, i * size, size));
        }
        return p;
    }

    // ------------------------------------------------------------------ what Linux's RTRS sends

    /**
     * Linux's RTRS heartbeats and IO responses: RDMA_WRITE_WITH_IMM without SGEs, remote
     * address 0 and rkey 0. Each consumes exactly one (here zero-length) RECV; one that
     * finds none waits for it instead of failing.
     */
    @Test
    void emptyWriteWithImmAndRkeyZeroConsumesExactlyOneZeroLengthRecv() throws Exception {
        Pair p = connect(pp -> {
            try {
                for (int i = 0; i < 2; i++) {
                    pp.server.qp().postRecv(new RecvWr(10 + i, List.of()));
                }
            } catch (RdmaException e) {
                throw new IllegalStateException(e);
            }
        }, null);
        int[] imms = {0x8000_0000, 0x1000_0007, 0x9000_0001};
        for (int i = 0; i < 3; i++) {
            p.client.qp().postSend(SendWr.writeWithImm(i, List.of(), 0, 0, imms[i]));
        }
        for (int i = 0; i < 2; i++) {
            assertEquals(i, p.client.nextWc(WcStatus.SUCCESS).wrId());
            WorkCompletion rc = p.server.nextWc(WcStatus.SUCCESS);
            assertEquals(10 + i, rc.wrId());
            assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, rc.opcode());
            assertEquals(0, rc.byteLen());
            assertTrue(rc.hasImm());
            assertEquals(imms[i], rc.imm());
        }
        p.client.assertNoWcFor(Duration.ofMillis(300));
        assertEquals(0, p.server.pendingCompletions(), "the third took a RECV that was not there");
        p.server.qp().postRecv(new RecvWr(12, List.of()));
        assertEquals(2, p.client.nextWc(WcStatus.SUCCESS).wrId());
        WorkCompletion rc = p.server.nextWc(WcStatus.SUCCESS);
        assertEquals(12, rc.wrId());
        assertEquals(imms[2], rc.imm());
        assertEquals(QpState.RTS, p.server.qp().state());
    }

    @Test
    void anEmptySendFitsAZeroLengthRecvAndALongerOneDoesNot() throws Exception {
        Pair p = connect(pp -> {
            try {
                pp.server.qp().postRecv(new RecvWr(1, List.of()));
                pp.server.qp().postRecv(new RecvWr(2, List.of()));
            } catch (RdmaException e) {
                throw new IllegalStateException(e);
            }
        }, null);
        MemoryRegion sbuf = track(mr(p.clientPd, 64));
        p.client.qp().postSend(SendWr.send(1, List.of()));
        assertEquals(1, p.client.nextWc(WcStatus.SUCCESS).wrId());
        WorkCompletion rc = p.server.nextWc(WcStatus.SUCCESS);
        assertEquals(1, rc.wrId());
        assertEquals(WcOpcode.RECV, rc.opcode());
        assertEquals(0, rc.byteLen());
        p.client.qp().postSend(SendWr.send(2, List.of(new Sge(sbuf, 0, 1))));
        assertEquals(2, p.server.nextWc(WcStatus.LOC_LEN_ERR).wrId());
    }

    /**
     * SEND_WITH_INV naming a region of the receiver's protection domain: where the provider
     * can invalidate it, the region dies (remote writes with its key refused) and the RECV
     * reports the key; where it cannot (adapters: a registered, not fast-registered,
     * region), the receiver fails the RECV and its QP, and the region lives on.
     */
    @Test
    void sendWithInvalidateOfARegisteredRegion() throws Exception {
        // one RECV: the SEND_WITH_INV takes it, so assertRemoteAccessError's first SEND waits (RNR)
        Pair p = connect(pp -> postRecvs(pp.server, recvBuffer(pp), 1, 64), null);
        MemoryRegion target = serverRegion(p, 4096);
        int rkey = target.rkey();
        MemoryRegion sbuf = track(mr(p.clientPd, 4096));
        fill(sbuf, 0, pattern(40, 3));
        p.client.qp().postSend(SendWr.sendWithInv(5, List.of(new Sge(sbuf, 0, 40)), rkey));
        if (!canInvalidateRegisteredRegionsRemotely()) {
            assertInvalidateRefused(p);
            assertTrue(target.valid(), "a region the receiver cannot invalidate stays valid");
            return;
        }
        assertEquals(5, p.client.nextWc(WcStatus.SUCCESS).wrId());
        WorkCompletion rc = p.server.nextWc(WcStatus.SUCCESS);
        assertEquals(0, rc.wrId());
        assertEquals(WcOpcode.RECV, rc.opcode());
        assertEquals(40, rc.byteLen());
        assertTrue(rc.withInv());
        assertEquals(rkey, rc.invalidatedRkey());
        assertFalse(rc.hasImm());
        assertFalse(target.valid(), "invalidated by the peer");
        fill(sbuf, 0, pattern(4096, 4));
        assertRemoteAccessError(p, SendWr.write(6, List.of(Sge.whole(sbuf)), target.address(), rkey), target,
                new byte[4096]);
        // reregistration brings it back under a new key
        int fresh = target.reregister();
        assertNotEquals(rkey, fresh);
        assertTrue(target.valid());
    }

    @Test
    void anEmptySendWithInvalidateFitsAZeroLengthRecv() throws Exception {
        Pair p = connect(pp -> {
            try {
                pp.server.qp().postRecv(new RecvWr(3, List.of()));
            } catch (RdmaException e) {
                throw new IllegalStateException(e);
            }
        }, null);
        MemoryRegion target = serverRegion(p, 4096);
        p.client.qp().postSend(SendWr.sendWithInv(1, List.of(), target.rkey()));
        if (!canInvalidateRegisteredRegionsRemotely()) {
            assertInvalidateRefused(p);
            assertTrue(target.valid(), "a region the receiver cannot invalidate stays valid");
            return;
        }
        assertEquals(1, p.client.nextWc(WcStatus.SUCCESS).wrId());
        WorkCompletion rc = p.server.nextWc(WcStatus.SUCCESS);
        assertEquals(3, rc.wrId());
        assertEquals(0, rc.byteLen());
        assertEquals(target.rkey(), rc.invalidatedRkey());
        assertFalse(target.valid());
    }

    @Test
    void sendWithInvalidateOfAnUnknownRkeyFailsTheReceiver() throws Exception {
        Pair p = connect(pp -> postRecvs(pp.server, recvBuffer(pp), 2, 64), null);
        MemoryRegion known = serverRegion(p, 4096);
        MemoryRegion sbuf = track(mr(p.clientPd, 64));
        p.client.qp().postSend(SendWr.sendWithInv(5, List.of(new Sge(sbuf, 0, 8)), known.rkey() ^ 0x5A5A5A00));
        assertInvalidateRefused(p);
        assertTrue(known.valid(), "a wrong key invalidates nothing");
    }

    @Test
    void sendWithInvalidateOfAnotherProtectionDomainsRkeyFailsTheReceiver() throws Exception {
        Pair p = connect(pp -> postRecvs(pp.server, recvBuffer(pp), 2, 64), null);
        MemoryRegion foreign = track(mr(pd(device(0)), 4096));
        MemoryRegion sbuf = track(mr(p.clientPd, 64));
        p.client.qp().postSend(SendWr.sendWithInv(5, List.of(new Sge(sbuf, 0, 8)), foreign.rkey()));
        assertInvalidateRefused(p);
        assertTrue(foreign.valid(), "another PD's region cannot be invalidated through this QP");
    }

    /**
     * The receiver of a SEND_WITH_INV it cannot carry out fails the RECV (the status is the
     * adapter's: rxe says REM_INV_REQ_ERR) without an invalidated key and goes to ERROR;
     * both sides end up disconnected. The sender's own completion is not checked: rxe
     * acknowledges the message before it fails the receiver (IB's class J error).
     */
    private void assertInvalidateRefused(Pair p) throws Exception {
        WorkCompletion rc = p.server.nextWc();
        assertNotEquals(WcStatus.SUCCESS, rc.status(), rc.toString());
        assertNotEquals(WcStatus.WR_FLUSH_ERR, rc.status(), "the RECV the SEND_WITH_INV took must fail: " + rc);
        assertEquals(null, rc.invalidatedRkey());
        p.server.nextEvent(CmEvent.Type.DISCONNECTED);
        assertEquals(QpState.ERROR, p.server.qp().state());
        p.client.nextEvent(CmEvent.Type.DISCONNECTED);
    }

    // ------------------------------------------------------------------ remote keys

    /** The next completion that is not the flush of one of {@code recvs}, which it strikes off. */
    private static WorkCompletion nextSendWc(Endpoint ep, Set<Long> recvs) throws InterruptedException {
        while (true) {
            WorkCompletion wc = ep.nextWc();
            if (wc.status() != WcStatus.WR_FLUSH_ERR || !recvs.remove(wc.wrId())) {
                return wc;
            }
        }
    }

    /**
     * Post a SEND the server has no RECV for (so the server holds the stream back: RNR),
     * then {@code bad}, then another SEND; post the RECV. The first SEND succeeds, the bad
     * request fails with REM_ACCESS_ERR, the last one is flushed, the QP is in ERROR.
     */
    private void assertRemoteAccessError(Pair p, SendWr bad, MemoryRegion untouched, byte[] expected)
            throws Exception {
        assertRemoteAccessError(p, bad, untouched, expected, Set.of());
    }

    /**
     * As above, for a client that still has the RECVs {@code clientRecvs} posted: the ERROR state
     * flushes them too. A CQ shared by both queues orders each queue's completions, not the two
     * against each other (7.3's rxe was seen flushing a RECV between the error and the flushed
     * SEND 99), so a flushed RECV may come anywhere after the error; each must come exactly once.
     */
    private void assertRemoteAccessError(Pair p, SendWr bad, MemoryRegion untouched, byte[] expected,
            Set<Long> clientRecvs) throws Exception {
        MemoryRegion extra = track(mr(p.clientPd, 64));
        p.client.qp().postSend(SendWr.send(98, List.of(new Sge(extra, 0, 8))));
        p.client.qp().postSend(bad);
        p.client.qp().postSend(SendWr.send(99, List.of(new Sge(extra, 0, 8))));
        MemoryRegion rbuf = track(mr(p.serverPd, 64));
        postRecvs(p.server, rbuf, 1, 64);
        assertEquals(98, p.client.nextWc(WcStatus.SUCCESS).wrId());
        Set<Long> unflushed = new HashSet<>(clientRecvs);
        WorkCompletion wc = nextSendWc(p.client, unflushed);
        assertEquals(WcStatus.REM_ACCESS_ERR, wc.status(), wc.toString());
        assertEquals(bad.wrId(), wc.wrId());
        WorkCompletion flushed = nextSendWc(p.client, unflushed);
        assertEquals(WcStatus.WR_FLUSH_ERR, flushed.status(), flushed.toString());
        assertEquals(99, flushed.wrId());
        while (!unflushed.isEmpty()) {
            WorkCompletion recv = p.client.nextWc(WcStatus.WR_FLUSH_ERR);
            assertTrue(unflushed.remove(recv.wrId()), "flushed once, and only a posted RECV: " + recv);
        }
        assertEquals(QpState.ERROR, p.client.qp().state());
        RdmaException e = assertThrows(RdmaException.class,
                () -> p.client.qp().postSend(SendWr.send(100, List.of(new Sge(extra, 0, 8)))));
        assertEquals(Errno.ENOTCONN, e.errno());
        if (untouched != null) {
            assertArrayEquals(expected, bytes(untouched, 0, expected.length), "target memory untouched");
        }
    }

    @Test
    void writeWithUnknownRkeyIsRemoteAccessError() throws Exception {
        Pair p = connect();
        MemoryRegion target = serverRegion(p, 4096);
        MemoryRegion src = track(mr(p.clientPd, 4096));
        fill(src, 0, pattern(4096, 1));
        assertRemoteAccessError(p, SendWr.write(1, List.of(Sge.whole(src)), target.address(), target.rkey() ^ 0x5A5A5A5A),
                target, new byte[4096]);
    }

    @Test
    void staleRkeyAfterInvalidateIsRefused() throws Exception {
        Pair p = connect();
        MemoryRegion target = serverRegion(p, 4096);
        int old = target.rkey();
        target.invalidate();
        assertFalse(target.valid());
        MemoryRegion src = track(mr(p.clientPd, 4096));
        fill(src, 0, pattern(4096, 1));
        assertRemoteAccessError(p, SendWr.write(1, List.of(Sge.whole(src)), target.address(), old), target,
                new byte[4096]);
    }

    /**
     * always_invalidate as Linux's RTRS server does it, through the queue pair, round after
     * round: the peer writes under the key it was given; a posted invalidation completes
     * (LOCAL_INV); the region still serves as a local SGE (the server RDMA-writes a read's data
     * from it); a re-registration through the queue pair gives a key never handed out before
     * (or the same key, {@link #reregistrationKeepsTheKey}), which the peer may use once a message
     * posted after it has reached the peer. After the last invalidation the last key is refused.
     * On DiSNI each round re-binds one memory window.
     */
    @Test
    void invalidationAndReregistrationThroughTheQueuePairRoundAfterRound() throws Exception {
        Pair p = connect();
        MemoryRegion target = serverRegion(p, 4096);
        MemoryRegion src = track(mr(p.clientPd, 4096));
        MemoryRegion back = track(mr(p.clientPd, 4096));
        MemoryRegion note = track(mr(p.serverPd, 64));
        int inboxSlots = 4;
        MemoryRegion inbox = track(mr(p.clientPd, 64 * inboxSlots));
        postRecvs(p.client, inbox, inboxSlots, 64);
        int key = target.rkey();
        Set<Integer> handedOut = new HashSet<>(List.of(key));
        int rounds = 3;
        for (int round = 0; round < rounds; round++) {
            fill(src, 0, pattern(4096, 10 + round));
            p.client.qp().postSend(SendWr.write(10 * round + 1, List.of(Sge.whole(src)), target.address(), key));
            assertEquals(10 * round + 1, p.client.nextWc(WcStatus.SUCCESS).wrId());
            assertArrayEquals(pattern(4096, 10 + round), bytes(target, 0, 4096), "written under key " + key);

            p.server.qp().postInvalidate(100 + round, target);
            WorkCompletion inv = p.server.nextWc(WcStatus.SUCCESS);
            assertEquals(100 + round, inv.wrId());
            assertEquals(WcOpcode.LOCAL_INV, inv.opcode());
            assertFalse(target.valid());
            p.server.qp().postSend(SendWr.write(200 + round, List.of(new Sge(target, 0, 4096)), back.address(),
                    back.rkey()));
            assertEquals(200 + round, p.server.nextWc(WcStatus.SUCCESS).wrId(), "an invalidated region as a local SGE");
            assertArrayEquals(pattern(4096, 10 + round), bytes(back, 0, 4096));
            if (round == rounds - 1) {
                break;
            }
            int fresh = p.server.qp().postReregister(300 + round, target);
            if (reregistrationKeepsTheKey(target)) {
                assertEquals(key, fresh, "the key given back");
            } else {
                assertTrue(handedOut.add(fresh), "key " + fresh + " was handed out before");
            }
            assertEquals(fresh, target.rkey());
            assertTrue(target.valid());
            // the key reaches the peer in a message posted after the re-registration (RKEY_RSP)
            p.server.qp().postSend(SendWr.send(400 + round, List.of(new Sge(note, 0, 8))));
            assertEquals(400 + round, p.server.nextWc(WcStatus.SUCCESS).wrId());
            assertEquals(WcOpcode.RECV, p.client.nextWc(WcStatus.SUCCESS).opcode());
            key = fresh;
        }
        fill(src, 0, pattern(4096, 99));
        // each round but the last took one of the RECVs posted at the start, in wr_id order
        Set<Long> stillPosted = new HashSet<>();
        for (long id = rounds - 1; id < inboxSlots; id++) {
            stillPosted.add(id);
        }
        assertRemoteAccessError(p, SendWr.write(5, List.of(Sge.whole(src)), target.address(), key), target,
                pattern(4096, 10 + rounds - 1), stillPosted);
    }

    /**
     * invalidateNow: a provider that kills a key with a call has done it when the call returns
     * true: remote access under the old key fails, the region still serves as a local SGE, no
     * completion of the kill ever comes, and a re-registration through the queue pair gives a
     * new key. A provider that answers false has done nothing: the old key still works.
     */
    @Test
    void invalidateNowKillsTheKeyBeforeItReturnsOrLeavesItAlone() throws Exception {
        Pair p = connect();
        MemoryRegion target = serverRegion(p, 4096);
        MemoryRegion src = track(mr(p.clientPd, 4096));
        MemoryRegion back = track(mr(p.clientPd, 4096));
        int old = target.rkey();
        fill(src, 0, pattern(4096, 5));
        p.client.qp().postSend(SendWr.write(1, List.of(Sge.whole(src)), target.address(), old));
        assertEquals(1, p.client.nextWc(WcStatus.SUCCESS).wrId());
        if (!p.server.qp().invalidateNow(target)) {
            assertTrue(target.valid(), "false: nothing done");
            fill(src, 0, pattern(4096, 6));
            p.client.qp().postSend(SendWr.write(2, List.of(Sge.whole(src)), target.address(), old));
            assertEquals(2, p.client.nextWc(WcStatus.SUCCESS).wrId(), "false: the old key still works");
            assertArrayEquals(pattern(4096, 6), bytes(target, 0, 4096));
            return;
        }
        assertFalse(target.valid());
        p.server.qp().postSend(SendWr.write(3, List.of(new Sge(target, 0, 4096)), back.address(), back.rkey()));
        WorkCompletion next = p.server.nextWc(WcStatus.SUCCESS);
        assertEquals(3, next.wrId(), "the kill completes nothing; the region serves as a local SGE");
        assertArrayEquals(pattern(4096, 5), bytes(back, 0, 4096));
        int fresh = p.server.qp().postReregister(4, target);
        assertTrue(target.valid());
        fill(src, 0, pattern(4096, 7));
        if (reregistrationKeepsTheKey(target)) {
            assertEquals(old, fresh, "the key given back");
            p.client.qp().postSend(SendWr.write(5, List.of(Sge.whole(src)), target.address(), fresh));
            assertEquals(5, p.client.nextWc(WcStatus.SUCCESS).wrId(), "the key given back works again");
            assertArrayEquals(pattern(4096, 7), bytes(target, 0, 4096));
            return;
        }
        assertNotEquals(old, fresh);
        assertRemoteAccessError(p, SendWr.write(5, List.of(Sge.whole(src)), target.address(), old), target,
                pattern(4096, 5));
    }

    @Test
    void reregisterGivesWorkingNewRkeyAndKillsTheOld() throws Exception {
        Pair p = connect();
        MemoryRegion target = serverRegion(p, 4096);
        int old = target.rkey();
        target.invalidate();
        int fresh = target.reregister();
        boolean keeps = reregistrationKeepsTheKey(target);
        if (keeps) {
            assertEquals(old, fresh, "the key given back");
        } else {
            assertNotEquals(old, fresh);
        }
        assertEquals(fresh, target.rkey());
        assertTrue(target.valid());
        MemoryRegion src = track(mr(p.clientPd, 4096));
        fill(src, 0, pattern(4096, 2));
        p.client.qp().postSend(SendWr.write(1, List.of(Sge.whole(src)), target.address(), fresh));
        p.client.nextWc(WcStatus.SUCCESS);
        assertArrayEquals(pattern(4096, 2), bytes(target, 0, 4096));
        fill(src, 0, pattern(4096, 3));
        if (keeps) {
            // the old key is the fresh one: killed again, it is refused again
            target.invalidate();
        }
        assertRemoteAccessError(p, SendWr.write(2, List.of(Sge.whole(src)), target.address(), old), target,
                pattern(4096, 2));
    }

    /**
     * Invalidation kills the rkey only (a local invalidate): the region keeps its lkey and
     * stays a valid SEND source and RECV target, before and after reregistration, while
     * the old rkey is refused. RTRS's always_invalidate depends on it: the server RDMA-writes
     * a read's data from a chunk whose rkey it already killed.
     */
    @Test
    void invalidatedRegionStaysUsableLocally() throws Exception {
        Pair p = connect();
        MemoryRegion region = serverRegion(p, 4096);
        int lkey = region.lkey();
        int old = region.rkey();
        byte[] outgoing = pattern(1000, 7);
        fill(region, 0, outgoing);
        region.invalidate();
        assertFalse(region.valid());
        assertEquals(lkey, region.lkey(), "invalidation leaves the lkey alone");

        MemoryRegion clientBuf = track(mr(p.clientPd, 4096));
        postRecvs(p.client, clientBuf, 1, 4096);
        p.server.qp().postSend(SendWr.send(1, List.of(new Sge(region, 0, outgoing.length))));
        assertEquals(1, p.server.nextWc(WcStatus.SUCCESS).wrId(), "SEND from an invalidated region");
        assertEquals(outgoing.length, p.client.nextWc(WcStatus.SUCCESS).byteLen());
        assertArrayEquals(outgoing, bytes(clientBuf, 0, outgoing.length));

        byte[] incoming = pattern(500, 8);
        p.server.qp().postRecv(new RecvWr(2, List.of(new Sge(region, 2048, 1024))));
        fill(clientBuf, 0, incoming);
        p.client.qp().postSend(SendWr.send(3, List.of(new Sge(clientBuf, 0, incoming.length))));
        p.client.nextWc(WcStatus.SUCCESS);
        WorkCompletion rc = p.server.nextWc(WcStatus.SUCCESS);
        assertEquals(2, rc.wrId(), "RECV into an invalidated region");
        assertEquals(incoming.length, rc.byteLen());
        assertArrayEquals(incoming, bytes(region, 2048, incoming.length));

        int fresh = region.reregister();
        boolean keeps = reregistrationKeepsTheKey(region);
        if (keeps) {
            assertEquals(old, fresh, "the key given back");
        } else {
            assertNotEquals(old, fresh);
        }
        assertEquals(lkey, region.lkey(), "reregistration leaves the lkey alone");
        postRecvs(p.client, clientBuf, 1, 4096);
        p.server.qp().postSend(SendWr.send(4, List.of(new Sge(region, 2048, incoming.length))));
        assertEquals(4, p.server.nextWc(WcStatus.SUCCESS).wrId(), "SEND from the reregistered region");
        assertEquals(incoming.length, p.client.nextWc(WcStatus.SUCCESS).byteLen());
        assertArrayEquals(incoming, bytes(clientBuf, 0, incoming.length));

        byte[] expected = new byte[4096];
        System.arraycopy(outgoing, 0, expected, 0, outgoing.length);
        System.arraycopy(incoming, 0, expected, 2048, incoming.length);
        MemoryRegion src = track(mr(p.clientPd, 4096));
        fill(src, 0, pattern(4096, 9));
        if (keeps) {
            region.invalidate();
        }
        assertRemoteAccessError(p, SendWr.write(5, List.of(Sge.whole(src)), region.address(), old), region, expected);
    }

    @Test
    void writePastTheRegionEndIsRefused() throws Exception {
        Pair p = connect();
        MemoryRegion target = serverRegion(p, 4096);
        MemoryRegion src = track(mr(p.clientPd, 4096));
        fill(src, 0, pattern(4096, 1));
        assertRemoteAccessError(p, SendWr.write(1, List.of(new Sge(src, 0, 200)), target.address() + 4000,
                target.rkey()), target, new byte[4096]);
    }

    @Test
    void writeBeforeTheRegionStartIsRefused() throws Exception {
        Pair p = connect();
        MemoryRegion target = serverRegion(p, 4096);
        MemoryRegion src = track(mr(p.clientPd, 4096));
        assertRemoteAccessError(p, SendWr.write(1, List.of(new Sge(src, 0, 100)), target.address() - 8,
                target.rkey()), target, new byte[4096]);
    }

    @Test
    void readPastTheRegionEndIsRefused() throws Exception {
        Pair p = connect();
        MemoryRegion remote = serverRegion(p, 4096);
        MemoryRegion local = track(mr(p.clientPd, 8192));
        assertRemoteAccessError(p, SendWr.read(1, List.of(new Sge(local, 0, 4097)), remote.address(),
                remote.rkey()), null, null);
    }

    @Test
    void writeToReadOnlyRegionIsRefused() throws Exception {
        Pair p = connect();
        MemoryRegion target = serverRegion(p, 4096, Access.LOCAL_WRITE, Access.REMOTE_READ);
        MemoryRegion src = track(mr(p.clientPd, 4096));
        fill(src, 0, pattern(4096, 1));
        assertRemoteAccessError(p, SendWr.write(1, List.of(Sge.whole(src)), target.address(), target.rkey()),
                target, new byte[4096]);
    }

    @Test
    void readFromWriteOnlyRegionIsRefused() throws Exception {
        Pair p = connect();
        MemoryRegion remote = serverRegion(p, 4096, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        MemoryRegion local = track(mr(p.clientPd, 4096));
        assertRemoteAccessError(p, SendWr.read(1, List.of(Sge.whole(local)), remote.address(), remote.rkey()),
                null, null);
    }

    @Test
    void rkeyOfADeregisteredRegionIsRefused() throws Exception {
        Pair p = connect();
        MemoryRegion target = serverRegion(p, 4096);
        long addr = target.address();
        int rkey = target.rkey();
        target.close();
        MemoryRegion src = track(mr(p.clientPd, 4096));
        p.client.qp().postSend(SendWr.write(1, List.of(Sge.whole(src)), addr, rkey));
        p.client.nextWc(WcStatus.REM_ACCESS_ERR);
    }

    @Test
    void rkeyOfARegionInAnotherProtectionDomainIsRefused() throws Exception {
        Pair p = connect();
        ProtectionDomain otherPd = pd(device(0));
        MemoryRegion foreign = track(mr(otherPd, 4096));
        MemoryRegion src = track(mr(p.clientPd, 4096));
        fill(src, 0, pattern(4096, 1));
        assertRemoteAccessError(p, SendWr.write(1, List.of(Sge.whole(src)), foreign.address(), foreign.rkey()),
                foreign, new byte[4096]);
    }

    @Test
    void unsignaledRequestsStillReportErrors() throws Exception {
        Pair p = connect();
        MemoryRegion target = serverRegion(p, 4096);
        MemoryRegion src = track(mr(p.clientPd, 4096));
        assertRemoteAccessError(p, SendWr.write(1, List.of(Sge.whole(src)), target.address(), target.rkey() + 1)
                .unsignaled(), target, new byte[4096]);
    }

    @Test
    void regionsGetDistinctAddressesAndKeys() throws Exception {
        ProtectionDomain pd = pd(device(0));
        MemoryRegion a = track(mr(pd, 4096));
        MemoryRegion b = track(mr(pd, 4096));
        assertNotEquals(a.rkey(), b.rkey());
        assertTrue(a.address() + a.length() <= b.address() || b.address() + b.length() <= a.address(),
                "regions overlap in the device's address space");
    }

    // ------------------------------------------------------------------ connection management

    /**
     * {@code got} is what was {@code sent}: an IB CM delivers its whole private data field
     * ({@code max} bytes, zero-filled past what the peer gave), others exactly what was sent.
     */
    protected static void assertPrivateData(byte[] sent, byte[] got, int max, String what) {
        assertTrue(got.length >= sent.length && got.length <= max,
                what + ": " + got.length + " bytes of private data for " + sent.length + " sent (at most " + max + ")");
        assertArrayEquals(sent, Arrays.copyOf(got, sent.length), what + ": private data differs");
        for (int i = sent.length; i < got.length; i++) {
            assertEquals(0, got[i], what + ": private data byte " + i + " past what was sent is not 0");
        }
    }

    @Test
    void privateDataReachesTheListenerAndRejectCarriesTheReason() throws Exception {
        RdmaDevice sd = device(0);
        RdmaDevice cd = device(1);
        CompletableFuture<ConnectRequest> seen = new CompletableFuture<>();
        CmListener l = track(sd.listen(listenAddress(sd), seen::complete));
        Endpoint client = new Endpoint("client");
        ProtectionDomain pd = pd(cd);
        MemoryRegion rbuf = track(mr(pd, 64));
        byte[] pdata = pattern(CmPrivateData.CONNECT_MAX, 7);
        client.qp(track(cd.connect(target(l), new QpInit(pd, 8, 8, 1, client), pdata, client)));
        client.qp().postRecv(new RecvWr(5, List.of(Sge.whole(rbuf))));
        ConnectRequest req = seen.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        assertPrivateData(pdata, req.privateData(), CmPrivateData.CONNECT_MAX, "connect request");
        // Linux's RTRS refuses with a CON_RSP (56 bytes) in the reject; the IB CM takes up to 148
        byte[] refusal = pattern(CmPrivateData.REJECT_MAX, 8);
        req.reject(Errno.EKEYREJECTED, refusal);
        CmEvent ev = client.nextEvent(CmEvent.Type.REJECTED);
        assertEquals(carriesRejectReason() ? Errno.EKEYREJECTED : Errno.ECONNREFUSED, ev.status(), ev.toString());
        assertPrivateData(refusal, ev.privateData(), CmPrivateData.REJECT_MAX, "REJECTED");
        assertEquals(5, client.nextWc(WcStatus.WR_FLUSH_ERR).wrId());
        assertEquals(QpState.ERROR, client.qp().state());
    }

    /** The exchange Linux's RTRS makes: CON_REQ in the connect, CON_RSP in the accept. */
    @Test
    void privateDataTravelsWithConnectAndAcceptByteForByte() throws Exception {
        byte[] conReq = pattern(CmPrivateData.CONNECT_MAX, 21);
        for (byte[] conRsp : List.of(pattern(56, 22), pattern(CmPrivateData.ACCEPT_MAX, 23), new byte[0])) {
            RdmaDevice sd = device(0);
            RdmaDevice cd = device(1);
            ProtectionDomain spd = pd(sd);
            ProtectionDomain cpd = pd(cd);
            Endpoint server = new Endpoint("server");
            CompletableFuture<byte[]> seen = new CompletableFuture<>();
            CmListener l = track(sd.listen(listenAddress(sd), req -> {
                try {
                    seen.complete(req.privateData());
                    server.qp(track(req.accept(new QpInit(spd, 8, 8, 1, server), server, conRsp, qp -> { })));
                } catch (Throwable t) {
                    seen.completeExceptionally(t);
                }
            }));
            Endpoint client = new Endpoint("client");
            client.qp(track(cd.connect(target(l), new QpInit(cpd, 8, 8, 1, client), conReq, client)));
            CmEvent up = client.nextEvent(CmEvent.Type.ESTABLISHED);
            assertPrivateData(conReq, seen.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS), CmPrivateData.CONNECT_MAX,
                    "connect request");
            assertPrivateData(conRsp, up.privateData(), CmPrivateData.ACCEPT_MAX, "initiator's ESTABLISHED");
            server.nextEvent(CmEvent.Type.ESTABLISHED);
        }
    }

    @Test
    void acceptPrivateDataLongerThanTheCmCarriesIsRefused() throws Exception {
        RdmaDevice sd = device(0);
        RdmaDevice cd = device(1);
        ProtectionDomain spd = pd(sd);
        CompletableFuture<ConnectRequest> seen = new CompletableFuture<>();
        CmListener l = track(sd.listen(listenAddress(sd), seen::complete));
        Endpoint client = new Endpoint("client");
        client.qp(track(cd.connect(target(l), new QpInit(pd(cd), 8, 8, 1, client), null, client)));
        ConnectRequest req = seen.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        Endpoint server = new Endpoint("server");
        RdmaException e = assertThrows(RdmaException.class, () -> req.accept(new QpInit(spd, 8, 8, 1, server), server,
                new byte[CmPrivateData.ACCEPT_MAX + 1], qp -> { }));
        assertEquals(Errno.EINVAL, e.errno());
        // nothing was answered: the request can still be refused
        req.reject(Errno.EPERM);
        client.nextEvent(CmEvent.Type.REJECTED);
    }

    /**
     * The setup hook runs on the new QP before the accept goes out: the initiator, which
     * SENDs from its ESTABLISHED callback, finds the RECV the hook posted (no RNR wait,
     * no failure), and nothing of the connection is up while the hook runs.
     */
    @Test
    void theSetupHookRunsBeforeTheInitiatorCanSend() throws Exception {
        RdmaDevice sd = device(0);
        RdmaDevice cd = device(1);
        ProtectionDomain spd = pd(sd);
        ProtectionDomain cpd = pd(cd);
        MemoryRegion rbuf = track(mr(spd, 64));
        MemoryRegion sbuf = track(mr(cpd, 64));
        fill(sbuf, 0, pattern(32, 31));
        Endpoint server = new Endpoint("server");
        AtomicBoolean hookDone = new AtomicBoolean();
        AtomicReference<Object> hookSaw = new AtomicReference<>();
        CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
        CmListener l = track(sd.listen(listenAddress(sd), req -> {
            try {
                accepted.complete(req.accept(new QpInit(spd, 8, 8, 1, server), server, null, qp -> {
                    hookSaw.set(qp);
                    qp.postRecv(new RecvWr(77, List.of(Sge.whole(rbuf))));
                    hookDone.set(true);
                }));
            } catch (Throwable t) {
                accepted.completeExceptionally(t);
            }
        }));
        Endpoint client = new Endpoint("client");
        CompletableFuture<Boolean> hookDoneAtEstablished = new CompletableFuture<>();
        CompletableFuture<Throwable> sendFailed = new CompletableFuture<>();
        client.qp(track(cd.connect(target(l), new QpInit(cpd, 8, 8, 1, client), null, (qp, ev) -> {
            if (ev.type() == CmEvent.Type.ESTABLISHED) {
                hookDoneAtEstablished.complete(hookDone.get());
                try {
                    qp.postSend(SendWr.send(1, List.of(new Sge(sbuf, 0, 32))));
                } catch (RdmaException e) {
                    sendFailed.complete(e);
                }
            }
            client.onEvent(qp, ev);
        })));
        QueuePair sq = track(accepted.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
        assertSame(sq, hookSaw.get(), "the hook sets up the QP accept returns");
        assertTrue(hookDoneAtEstablished.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS),
                "the initiator was established before the setup hook had finished");
        assertEquals(1, client.nextWc(WcStatus.SUCCESS).wrId());
        assertFalse(sendFailed.isDone(), "posting on ESTABLISHED failed");
        WorkCompletion rc = server.nextWc(WcStatus.SUCCESS);
        assertEquals(77, rc.wrId());
        assertEquals(32, rc.byteLen());
        assertArrayEquals(pattern(32, 31), bytes(rbuf, 0, 32));
    }

    @Test
    void aFailingSetupHookRejectsTheInitiator() throws Exception {
        RdmaDevice sd = device(0);
        RdmaDevice cd = device(1);
        ProtectionDomain spd = pd(sd);
        Endpoint server = new Endpoint("server");
        CompletableFuture<Throwable> thrown = new CompletableFuture<>();
        CmListener l = track(sd.listen(listenAddress(sd), req -> {
            try {
                req.accept(new QpInit(spd, 8, 8, 1, server), server, pattern(20, 1), qp -> {
                    throw new RdmaException(Errno.ENOBUFS, "setup failed on purpose");
                });
                thrown.complete(null);
            } catch (Throwable t) {
                thrown.complete(t);
            }
        }));
        Endpoint client = new Endpoint("client");
        client.qp(track(cd.connect(target(l), new QpInit(pd(cd), 8, 8, 1, client), null, client)));
        Throwable t = thrown.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        assertTrue(t instanceof RdmaException && ((RdmaException) t).errno() == Errno.ENOBUFS,
                "accept must pass the hook's exception on: " + t);
        CmEvent ev = client.nextEvent(CmEvent.Type.REJECTED);
        assertEquals(Errno.ECONNREFUSED, ev.status());
        assertPrivateData(new byte[0], ev.privateData(), CmPrivateData.REJECT_MAX, "REJECTED after a failed setup");
        assertEquals(QpState.ERROR, client.qp().state());
    }

    @Test
    void privateDataLongerThan56BytesIsRefused() throws Exception {
        RdmaDevice cd = device(1);
        Endpoint client = new Endpoint("client");
        ProtectionDomain pd = pd(cd);
        RdmaException e = assertThrows(RdmaException.class, () -> cd.connect(
                new InetSocketAddress(cd.addresses().get(0), 9), new QpInit(pd, 8, 8, 1, client), new byte[57],
                client));
        assertEquals(Errno.EINVAL, e.errno());
    }

    @Test
    void connectingWhereNobodyListensIsUnreachable() throws Exception {
        RdmaDevice sd = device(0);
        RdmaDevice cd = device(1);
        CmListener l = sd.listen(listenAddress(sd), req -> req.reject(Errno.EPERM));
        InetSocketAddress gone = target(l);
        l.close();
        Endpoint client = new Endpoint("client");
        ProtectionDomain pd = pd(cd);
        client.qp(track(cd.connect(gone, new QpInit(pd, 8, 8, 1, client), null, client)));
        client.nextEvent(CmEvent.Type.UNREACHABLE);
        assertEquals(QpState.ERROR, client.qp().state());
    }

    @Test
    void manyConnectionsToOneListenerStaySeparate() throws Exception {
        int cons = 16;
        int msgs = 50;
        RdmaDevice sd = device(0);
        RdmaDevice cd = device(1);
        ProtectionDomain spd = pd(sd);
        ProtectionDomain cpd = pd(cd);
        List<Endpoint> servers = new CopyOnWriteArrayList<>();
        MemoryRegion rbuf = track(mr(spd, cons * msgs * 8));
        AtomicInteger next = new AtomicInteger();
        CmListener l = track(sd.listen(listenAddress(sd), req -> {
            try {
                Endpoint ep = new Endpoint("server");
                ep.qp(req.accept(new QpInit(spd, 64, msgs, 1, ep), ep));
                int base = next.getAndIncrement() * msgs;
                for (int i = 0; i < msgs; i++) {
                    ep.qp().postRecv(new RecvWr(base + i, List.of(new Sge(rbuf, (base + i) * 8, 8))));
                }
                servers.add(ep);
            } catch (RdmaException e) {
                throw new IllegalStateException(e);
            }
        }));
        MemoryRegion src = track(mr(cpd, cons * 8));
        List<Endpoint> clients = new ArrayList<>();
        for (int c = 0; c < cons; c++) {
            Endpoint ep = new Endpoint("client" + c);
            ep.qp(track(cd.connect(target(l), new QpInit(cpd, msgs, 8, 1, ep), new byte[] {(byte) c}, ep)));
            clients.add(ep);
        }
        for (int c = 0; c < cons; c++) {
            clients.get(c).nextEvent(CmEvent.Type.ESTABLISHED);
            src.buffer().putLong(c * 8, c);
            for (int i = 0; i < msgs; i++) {
                clients.get(c).qp().postSend(SendWr.send(i, List.of(new Sge(src, c * 8, 8))));
            }
        }
        for (int c = 0; c < cons; c++) {
            for (int i = 0; i < msgs; i++) {
                assertEquals(i, clients.get(c).nextWc(WcStatus.SUCCESS).wrId());
            }
        }
        assertEquals(cons, servers.size());
        for (Endpoint server : servers) {
            track(server.qp());
            long sender = -1;
            for (int i = 0; i < msgs; i++) {
                WorkCompletion wc = server.nextWc(WcStatus.SUCCESS);
                long from = rbuf.buffer().getLong((int) wc.wrId() * 8);
                if (sender < 0) {
                    sender = from;
                }
                assertEquals(sender, from, "one connection, one sender");
            }
        }
    }

    @Test
    void disconnectFlushesBothSidesAndBothSeeDisconnected() throws Exception {
        Pair p = connect(pp -> postRecvs(pp.server, recvBuffer(pp), 3, 64), null);
        MemoryRegion crbuf = track(mr(p.clientPd, 4096));
        postRecvs(p.client, crbuf, 2, 64);
        p.client.qp().disconnect();
        p.client.nextEvent(CmEvent.Type.DISCONNECTED);
        p.server.nextEvent(CmEvent.Type.DISCONNECTED);
        for (int i = 0; i < 2; i++) {
            assertEquals(i, p.client.nextWc(WcStatus.WR_FLUSH_ERR).wrId());
        }
        for (int i = 0; i < 3; i++) {
            assertEquals(i, p.server.nextWc(WcStatus.WR_FLUSH_ERR).wrId());
        }
        assertEquals(QpState.ERROR, p.server.qp().state());
        RdmaException e = assertThrows(RdmaException.class,
                () -> p.server.qp().postSend(SendWr.send(1, List.of(new Sge(crbuf, 0, 1)))));
        assertEquals(Errno.ENOTCONN, e.errno());
    }

    private MemoryRegion recvBuffer(Pair p) {
        try {
            return track(mr(p.serverPd, 4096));
        } catch (RdmaException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void closingAQueuePairFlushesItsRequestsBeforeReturning() throws Exception {
        Pair p = connect();
        MemoryRegion rbuf = track(mr(p.clientPd, 4096));
        postRecvs(p.client, rbuf, 4, 64);
        p.client.qp().close();
        assertEquals(QpState.CLOSED, p.client.qp().state());
        assertEquals(4, p.client.pendingCompletions(), "flushes delivered before close returned");
        for (int i = 0; i < 4; i++) {
            p.client.nextWc(WcStatus.WR_FLUSH_ERR);
        }
        p.server.nextEvent(CmEvent.Type.DISCONNECTED);
    }

    @Test
    void listenerOnAForeignAddressIsRefused() throws Exception {
        RdmaDevice sd = device(0);
        RdmaException e = assertThrows(RdmaException.class,
                () -> sd.listen(new InetSocketAddress("192.0.2.1", 0), req -> req.reject(Errno.EPERM)));
        assertEquals(Errno.EADDRNOTAVAIL, e.errno());
    }

    // ------------------------------------------------------------------ device removal

    @Test
    void deviceRemovalFlushesEverythingAndFreesThePort() throws Exception {
        Assumptions.assumeTrue(canRemoveDevices(), "provider cannot remove devices");
        Pair p = connect(pp -> postRecvs(pp.server, recvBuffer(pp), 2, 64), null);
        MemoryRegion crbuf = track(mr(p.clientPd, 4096));
        postRecvs(p.client, crbuf, 1, 64);
        InetSocketAddress port = p.listener.localAddress();
        RdmaDevice server = device(0);
        removeDevice(server);
        devices.set(0, null);
        p.server.nextEvent(CmEvent.Type.DEVICE_REMOVAL);
        assertEquals(0, p.server.nextWc(WcStatus.WR_FLUSH_ERR).wrId());
        assertEquals(1, p.server.nextWc(WcStatus.WR_FLUSH_ERR).wrId());
        assertEquals(QpState.ERROR, p.server.qp().state());
        p.client.nextEvent(CmEvent.Type.DISCONNECTED);
        p.client.nextWc(WcStatus.WR_FLUSH_ERR);
        RdmaException e = assertThrows(RdmaException.class, server::allocPd);
        assertEquals(Errno.ENODEV, e.errno());

        RdmaDevice again = device(0);
        CmListener l = track(again.listen(port, req -> req.reject(Errno.EPERM)));
        assertEquals(port.getPort(), l.localAddress().getPort(), "port freed by the removal");
    }

    @Test
    void postingToAnUnconnectedQueuePairIsHeldUntilEstablished() throws Exception {
        RdmaDevice sd = device(0);
        RdmaDevice cd = device(1);
        Endpoint server = new Endpoint("server");
        ProtectionDomain spd = pd(sd);
        MemoryRegion rbuf = track(mr(spd, 64));
        CompletableFuture<ConnectRequest> req = new CompletableFuture<>();
        CmListener l = track(sd.listen(listenAddress(sd), req::complete));
        Endpoint client = new Endpoint("client");
        ProtectionDomain cpd = pd(cd);
        MemoryRegion sbuf = track(mr(cpd, 64));
        client.qp(track(cd.connect(target(l), new QpInit(cpd, 8, 8, 1, client), null, client)));
        client.qp().postSend(SendWr.send(1, List.of(new Sge(sbuf, 0, 4))));
        ConnectRequest r = req.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        server.qp(track(r.accept(new QpInit(spd, 8, 8, 1, server), server)));
        server.qp().postRecv(new RecvWr(1, List.of(Sge.whole(rbuf))));
        client.nextEvent(CmEvent.Type.ESTABLISHED);
        client.nextWc(WcStatus.SUCCESS);
        assertEquals(4, server.nextWc(WcStatus.SUCCESS).byteLen());
    }

    @Test
    void localProtectionErrorForAForeignRegion() throws Exception {
        Pair p = connect(pp -> postRecvs(pp.server, recvBuffer(pp), 1, 64), null);
        ProtectionDomain other = pd(device(1));
        MemoryRegion foreign = track(mr(other, 64));
        p.client.qp().postSend(SendWr.send(1, List.of(new Sge(foreign, 0, 8))));
        WorkCompletion wc = p.client.nextWc();
        // the provider's part: the request completes, in error, with its id, and the QP is in ERROR
        assertEquals(1, wc.wrId(), wc.toString());
        assertNotEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        assertEquals(QpState.ERROR, p.client.qp().state());
        // the device's part: which error (foreignRegionSendStatus says what this device gives)
        assertTrue(foreignRegionSendStatus().contains(wc.status()),
                "a SEND naming another PD's region ended in " + wc.status() + ", expected one of " + foreignRegionSendStatus());
    }

    @Test
    void registrationRules() throws Exception {
        ProtectionDomain pd = pd(device(0));
        RdmaException heap = assertThrows(RdmaException.class,
                () -> pd.register(ByteBuffer.allocate(64), Access.all()));
        assertEquals(Errno.EINVAL, heap.errno());
        MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(64).position(16).limit(48),
                Set.of(Access.LOCAL_WRITE));
        assertEquals(32, mr.length());
        mr.close();
        mr.close();
        assertFalse(mr.valid());
    }
}

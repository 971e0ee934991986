package io.rnbd.rtrs.server.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.api.RtrsServerRequest;
import io.rnbd.rtrs.proto.Imm;
import io.rnbd.rtrs.proto.RkeyRsp;
import io.rnbd.rtrs.proto.SgDesc;
import io.rnbd.testkit.Await;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 35: Linux's client fails a request over to another path with the same permit, so the
 * same buf_id (rtrs_clt_failover_req), while this server's upper layer may still hold the
 * first copy. The window is forced open here: an upper layer that holds every request until
 * the test lets it go, and does its work only then (a write takes the chunk's bytes, a read
 * fills it, when released: a slow backend's bio). The server used to take the copy for a
 * protocol error ("chunk reused while in flight") and close the surviving path.
 */
class FailoverOfAnInflightRequestTest {
    static final int QD = 4;
    static final int CHUNK = 16384;

    SoftDevice dev;
    final List<SoftDevice> others = new ArrayList<>();
    ScheduledExecutorService timer;
    RtrsServer server;
    final LinkedBlockingQueue<RtrsServerRequest> held = new LinkedBlockingQueue<>();
    /** What the backend holds, by the key in each request's user header. */
    final Map<Long, byte[]> stored = new ConcurrentHashMap<>();

    final RtrsServerOps ops = held::add;

    void start(boolean alwaysInvalidate) throws Exception {
        start(alwaysInvalidate, false);
    }

    /** {@code atOnce}: the provider kills a chunk's key with a call (DiSNI without windows), not a posted request. */
    void start(boolean alwaysInvalidate, boolean atOnce) throws Exception {
        dev = new SoftDevice("soft-fo", InetAddress.getByName("127.0.0.1"));
        dev.invalidateAtOnce(atOnce);
        timer = Executors.newSingleThreadScheduledExecutor();
        server = new RtrsServer(new ServerConfig(0, CHUNK, QD, alwaysInvalidate, 60_000, 5), () -> ops, () -> null,
                timer, System::nanoTime);
        server.add(dev);
    }

    @AfterEach
    void stop() throws Exception {
        held.forEach(r -> r.complete(0));
        others.forEach(SoftDevice::close);
        server.close();
        timer.shutdownNow();
        timer.awaitTermination(5, TimeUnit.SECONDS);
        dev.close();
    }

    InetSocketAddress addr() {
        return server.listenAddresses(dev).get(0);
    }

    /** A second path of {@code first}'s session, from another address (one path per address pair). */
    RawClient secondPath(RawClient first, String name) throws Exception {
        SoftDevice d = new SoftDevice("soft-fo2", InetAddress.getByName("127.0.0.2"));
        others.add(d);
        return new RawClient(d, first.sess, UUID.randomUUID()).connect(addr(), 2, name);
    }

    /** The backend does the request's work now, as a bio that completes late, and answers. */
    void release(RtrsServerRequest r, byte[] readContent) {
        long key = r.userHeader().order(ByteOrder.LITTLE_ENDIAN).getLong(0);
        if (r.isWrite()) {
            byte[] b = new byte[r.data().remaining()];
            r.data().get(b);
            stored.put(key, b);
        } else {
            r.data().put(readContent);
        }
        r.complete(0);
    }

    RtrsServerRequest nextHeld() throws InterruptedException {
        RtrsServerRequest r = held.poll(10, TimeUnit.SECONDS);
        assertTrue(r != null, "nothing reached the upper layer");
        return r;
    }

    /** Under always_invalidate, the rkey each chunk has now on each path (RKEY_RSP), by path and chunk. */
    static final Map<String, Integer> RKEYS = new ConcurrentHashMap<>();

    static int rkey(RawClient c, int buf) {
        return RKEYS.getOrDefault(c.path + "/" + buf, c.info.descs().get(buf).key());
    }

    static void sendWrite(RawClient c, int buf, long key, byte[] data) throws Exception {
        SgDesc d = c.info.descs().get(buf);
        c.cons[1].writeImm(HostileClientTest.writeMsg(data, key, 8), d.addr(), rkey(c, buf),
                Imm.ioReq(buf, data.length + 8, Imm.offsetBits(QD)));
    }

    /** A READ of {@code len} bytes into the client's local buffer at 0. */
    static void sendRead(RawClient c, int buf, long key, int len) throws Exception {
        SgDesc d = c.info.descs().get(buf);
        byte[] msg = HostileClientTest.readMsg(c, 1, len, len);
        ByteBuffer.wrap(msg).order(ByteOrder.LITTLE_ENDIAN).putLong(0, key);
        c.cons[1].writeImm(msg, d.addr() + len, rkey(c, buf), Imm.ioReq(buf, len + 8, Imm.offsetBits(QD)));
    }

    /** The IO_RSP for {@code buf} on {@code c}'s IO connection: its errno. */
    static int answer(RawClient c, int buf) throws Exception {
        RawClient.Con con = c.cons[1];
        WorkCompletion wc = con.recv();
        assertTrue(wc.hasImm());
        int id = Imm.rspMsgId(wc.imm());
        if (wc.byteLen() > 0) {
            RkeyRsp k = RkeyRsp.decode(con.data(wc)); // always_invalidate: an RKEY_RSP
            id = k.bufId();
            RKEYS.put(c.path + "/" + id, k.rkey());
        }
        assertEquals(buf, id);
        con.repost(wc);
        return Imm.rspErrno(wc.imm());
    }

    static ServerSession session(RtrsServer s, String name) {
        return s.session(name).orElseThrow();
    }

    /**
     * The worst case: the copy arrives while the server still has the first path connected (the
     * client stopped its connections, the server has not seen it yet) and the backend still
     * runs the first copy. The surviving path stays; the copy waits for the first copy and is
     * answered on the new path; the first copy's answer is dropped, never a second answer.
     */
    @ParameterizedTest(name = "always_invalidate={0}, killed at once={1}")
    @CsvSource({"false,false", "true,false", "true,true"})
    void aWriteResentOnAnotherPathWhileTheFirstCopyRunsIsAnsweredOnceOnTheNewPath(boolean inval, boolean atOnce)
            throws Exception {
        start(inval, atOnce);
        try (RawClient a = new RawClient(dev).connect(addr(), 2, "fo");
             RawClient b = secondPath(a, "fo")) {
            byte[] x = "the data of the write that fails over".getBytes();
            sendWrite(a, 1, 7, x);
            RtrsServerRequest first = nextHeld();
            // path A's connections are stopped on the client; it resends on B, same permit
            sendWrite(b, 1, 7, x);
            Await.until("the copy is seen", () -> session(server, "fo").stats().failedOverCount() == 1);
            assertNull(held.poll(200, TimeUnit.MILLISECONDS), "the copy waits while the first copy runs");
            assertNull(b.cons[1].recvs.poll(), "no answer frees the permit while the backend holds the chunk");
            assertEquals(2, session(server, "fo").pathCount(), "the surviving path stays");

            release(first, null);
            RtrsServerRequest copy = nextHeld();
            assertTrue(copy.isWrite());
            release(copy, null);
            assertEquals(0, answer(b, 1), "the copy is answered on the path it came on");
            assertArrayEquals(x, stored.get(7L));
            assertNull(a.cons[1].recvs.poll(300, TimeUnit.MILLISECONDS), "the first copy's answer was dropped");

            // the permit is free again: the chunk serves the next request on B
            byte[] y = "the next request in the same chunk".getBytes();
            sendWrite(b, 1, 8, y);
            release(nextHeld(), null);
            assertEquals(0, answer(b, 1));
            assertArrayEquals(y, stored.get(8L));
            assertEquals(2, session(server, "fo").pathCount());
            if (inval) {
                LinuxClientWireTest.assertKilled(dev, atOnce, 3);
            }
        }
    }

    /**
     * The stale-data case the wait prevents: a backend that reads the chunk only when it runs.
     * Were the copy answered before the first copy is done, the client would put its next
     * request's bytes in the chunk and the first copy would write them under its own key.
     */
    @Test
    void theNextRequestInTheChunkCannotReachTheFirstCopysBackend() throws Exception {
        start(false);
        try (RawClient a = new RawClient(dev).connect(addr(), 2, "fo");
             RawClient b = secondPath(a, "fo")) {
            byte[] x = new byte[4096];
            java.util.Arrays.fill(x, (byte) 'x');
            sendWrite(a, 2, 1, x);
            RtrsServerRequest first = nextHeld();
            sendWrite(b, 2, 1, x);
            Await.until("the copy is seen", () -> session(server, "fo").stats().failedOverCount() == 1);
            // the client can send its next request in chunk 2 only after an answer for chunk 2
            assertNull(b.cons[1].recvs.poll(300, TimeUnit.MILLISECONDS), "chunk 2 must not be answered yet");
            release(first, null);
            release(nextHeld(), null);
            assertEquals(0, answer(b, 2));
            byte[] y = new byte[4096];
            java.util.Arrays.fill(y, (byte) 'y');
            sendWrite(b, 2, 2, y);
            release(nextHeld(), null);
            assertEquals(0, answer(b, 2));
            assertArrayEquals(x, stored.get(1L), "the failed-over write's data is its own");
            assertArrayEquals(y, stored.get(2L));
        }
    }

    /**
     * A read failed over: the copy reads again once the first copy is done and its data is what
     * reaches the client (the first copy's data would be older); one answer, on the new path.
     */
    @ParameterizedTest(name = "killed at once={0}")
    @ValueSource(booleans = {false, true})
    void aReadResentOnAnotherPathGetsTheCopysData(boolean atOnce) throws Exception {
        start(true, atOnce);
        try (RawClient a = new RawClient(dev).connect(addr(), 2, "fo");
             RawClient b = secondPath(a, "fo")) {
            sendRead(a, 3, 9, 512);
            RtrsServerRequest first = nextHeld();
            sendRead(b, 3, 9, 512);
            Await.until("the copy is seen", () -> session(server, "fo").stats().failedOverCount() == 1);
            byte[] old = new byte[512];
            java.util.Arrays.fill(old, (byte) 1);
            release(first, old);
            byte[] fresh = new byte[512];
            java.util.Arrays.fill(fresh, (byte) 2);
            release(nextHeld(), fresh);
            assertEquals(0, answer(b, 3));
            byte[] got = new byte[512];
            b.local.buffer().get(0, got);
            assertArrayEquals(fresh, got);
            assertNull(a.cons[1].recvs.poll(300, TimeUnit.MILLISECONDS), "no answer on the first path");
            LinuxClientWireTest.assertKilled(dev, atOnce, 2);
        }
    }

    /**
     * As Linux's client really does it: the first path is gone (the server sees it closed) before
     * the copy arrives. The first path drains only when its request is done; the copy still waits
     * for it; a copy whose own path closes while it waits is dropped, and its path drains.
     */
    @Test
    void theFirstPathClosedBeforeTheCopyArrivesDrainsWhenItsRequestIsDone() throws Exception {
        start(false);
        try (RawClient a = new RawClient(dev).connect(addr(), 2, "fo");
             RawClient b = secondPath(a, "fo")) {
            byte[] x = "closed first".getBytes();
            sendWrite(a, 0, 3, x);
            RtrsServerRequest first = nextHeld();
            UUID pathA = a.path;
            for (RawClient.Con c : a.cons) {
                c.qp.close();
            }
            Await.until("path A closing", () -> session(server, "fo").pathCount() == 1);
            sendWrite(b, 0, 3, x);
            Await.until("the copy is seen", () -> session(server, "fo").stats().failedOverCount() == 1);
            assertTrue(session(server, "fo").info().paths().stream().anyMatch(p -> p.uuid().equals(pathA)),
                    "path A stays until its request is done");
            release(first, null);
            Await.until("path A drained", () -> session(server, "fo").info().paths().stream()
                    .noneMatch(p -> p.uuid().equals(pathA)));
            release(nextHeld(), null);
            assertEquals(0, answer(b, 0));
            assertArrayEquals(x, stored.get(3L));

            // a copy whose own path closes while it waits goes with it
            sendWrite(b, 1, 4, x);
            RtrsServerRequest again = nextHeld();
            try (RawClient c = new RawClient(newDevice(3), a.sess, UUID.randomUUID()).connect(addr(), 2, "fo")) {
                sendWrite(c, 1, 4, x);
                Await.until("second copy seen", () -> session(server, "fo").stats().failedOverCount() == 2);
                UUID pathC = c.path;
                for (RawClient.Con con : c.cons) {
                    con.qp.close();
                }
                Await.until("path C drained without its waiting copy", () -> session(server, "fo").info().paths()
                        .stream().noneMatch(p -> p.uuid().equals(pathC)));
            }
            release(again, null);
            assertNull(held.poll(300, TimeUnit.MILLISECONDS), "the dropped copy never runs");
            assertNull(b.cons[1].recvs.poll(300, TimeUnit.MILLISECONDS), "B's request was superseded by C's copy");
            assertEquals(0, session(server, "fo").stats().snapshot().inflight());
        }
    }

    SoftDevice newDevice(int lastOctet) throws Exception {
        SoftDevice d = new SoftDevice("soft-fo" + lastOctet, InetAddress.getByName("127.0.0." + lastOctet));
        others.add(d);
        return d;
    }

    /** Reuse on the path that holds the chunk is no failover: that path is closed, as before. */
    @Test
    void aChunkReusedOnItsOwnPathWhileInFlightStillClosesThatPath() throws Exception {
        start(false);
        try (RawClient a = new RawClient(dev).connect(addr(), 2, "fo")) {
            sendWrite(a, 1, 1, new byte[16]);
            nextHeld();
            sendWrite(a, 1, 2, new byte[16]);
            assertEquals(CmEvent.Type.DISCONNECTED, a.cons[1].event().type());
            Await.until("the path is closed", () -> session(server, "fo").pathCount() == 0);
            assertEquals(0, session(server, "fo").stats().failedOverCount());
        }
    }
}

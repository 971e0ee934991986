package io.rnbd.rtrs.server.internal;

import io.rnbd.rdma.api.CmEvent;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.WcStatus;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.api.RtrsServerRequest;
import io.rnbd.rtrs.proto.ConRsp;
import io.rnbd.rtrs.proto.Imm;
import io.rnbd.rtrs.proto.RdmaReadMsg;
import io.rnbd.rtrs.proto.RdmaWriteMsg;
import io.rnbd.rtrs.proto.RkeyRsp;
import io.rnbd.rtrs.proto.SgDesc;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Malformed and hostile clients on raw verbs: errors or a disconnect for them only. */
class HostileClientTest {
    static final int QD = 6;
    static final int CHUNK = 16384;

    SoftDevice dev;
    ScheduledExecutorService timer;
    RtrsServer server;
    final Map<Long, byte[]> stored = new ConcurrentHashMap<>();

    final RtrsServerOps ops = new RtrsServerOps() {
        @Override
        public void onRequest(RtrsServerRequest r) {
            long key = r.userHeader().order(ByteOrder.LITTLE_ENDIAN).getLong(0);
            if (r.isWrite()) {
                byte[] b = new byte[r.data().remaining()];
                r.data().get(b);
                stored.put(key, b);
            } else {
                ByteBuffer d = r.data();
                byte[] b = stored.getOrDefault(key, new byte[0]);
                d.put(b, 0, Math.min(b.length, d.remaining()));
            }
            r.complete(0);
        }
    };

    void start(boolean alwaysInvalidate) throws Exception {
        dev = new SoftDevice("soft-h", InetAddress.getByName("127.0.0.1"));
        timer = Executors.newSingleThreadScheduledExecutor();
        server = new RtrsServer(new ServerConfig(0, CHUNK, QD, alwaysInvalidate, 60_000, 5), () -> ops, () -> null,
                timer, System::nanoTime);
        server.add(dev);
    }

    @BeforeEach
    void none() {
        stored.clear();
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

    static byte[] writeMsg(byte[] data, long key, int usrLenClaim) {
        ByteBuffer b = ByteBuffer.allocate(data.length + 8 + RdmaWriteMsg.SIZE).order(ByteOrder.LITTLE_ENDIAN);
        b.put(data).putLong(key);
        new RdmaWriteMsg(usrLenClaim).encode(b);
        return b.array();
    }

    static int writeImm(int buf, byte[] data) {
        return Imm.ioReq(buf, data.length + 8, Imm.offsetBits(QD));
    }

    /** Sends one IO and returns the IO_RSP's errno (checking the message id). */
    static int io(RawClient c, int buf, byte[] bytes, int offset) throws Exception {
        return ioAt(c, buf, bytes, 0, offset);
    }

    /** {@code bytes} land at {@code at} in the chunk; the IMM points the server at {@code offset}. */
    static int ioAt(RawClient c, int buf, byte[] bytes, int at, int offset) throws Exception {
        SgDesc d = c.info.descs().get(buf);
        RawClient.Con con = c.cons[1];
        con.writeImm(bytes, d.addr() + at, d.key(), Imm.ioReq(buf, offset, Imm.offsetBits(QD)));
        WorkCompletion wc = con.recv();
        assertTrue(wc.hasImm());
        assertEquals(buf, Imm.rspMsgId(wc.imm()));
        con.repost(wc);
        return Imm.rspErrno(wc.imm());
    }

    @Test
    void malformedIoGetsAnErrorAndTheServerKeepsServing() throws Exception {
        start(false);
        try (RawClient bad = new RawClient(dev).connect(addr(), 2, "bad");
             RawClient good = new RawClient(dev).connect(addr(), 2, "good")) {
            byte[] data = new byte[100];
            // user header length larger than what precedes the trailer
            assertEquals(Errno.EMSGSIZE, io(bad, 0, writeMsg(data, 1, 5000), 108));
            // trailer of an unknown type
            byte[] unknown = writeMsg(data, 1, 8);
            unknown[108] = 9;
            assertEquals(Errno.EPROTO, io(bad, 1, unknown, 108));
            // message offset at the very end of the chunk
            assertEquals(Errno.EINVAL, io(bad, 2, new byte[0], CHUNK - 1));
            // a read asking for two segments, and one asking beyond max IO
            assertEquals(Errno.EINVAL, ioAt(bad, 3, readMsg(bad, 2, 100, 64), 64, 64 + 8));
            assertEquals(Errno.EMSGSIZE, ioAt(bad, 4, readMsg(bad, 1, CHUNK, 64), 64, 64 + 8));
            // a read whose data would overlap its own header
            assertEquals(Errno.EMSGSIZE, ioAt(bad, 5, readMsg(bad, 1, 100, 50), 50, 50 + 8));
            // a read trailer cut off by the end of the chunk
            byte[] cut = readMsg(bad, 1, 10, 0);
            assertEquals(Errno.EBADMSG, ioAt(bad, 0, java.util.Arrays.copyOf(cut, 8 + 8), CHUNK - 16, CHUNK - 8));
            assertEquals(0, server.sessions().stream().filter(s -> s.name().equals("bad")).findFirst()
                    .orElseThrow().stats().inflight());
            // the same client, behaving, still gets served; so does everybody else
            byte[] payload = "hello rtrs".getBytes();
            assertEquals(0, io(bad, 0, writeMsg(payload, 42, 8), payload.length + 8));
            assertArrayEquals(payload, stored.get(42L));
            assertEquals(0, io(good, 5, writeMsg(payload, 43, 8), payload.length + 8));
            assertArrayEquals(payload, stored.get(43L));
        }
    }

    /** [hdr (usrLen bytes, key in the first 8)][RDMA_READ with n descriptors of len] placed at offset dataLen. */
    static byte[] readMsg(RawClient c, int n, int len, int dataLen) {
        List<SgDesc> ds = java.util.Collections.nCopies(n, new SgDesc(c.local.address(), c.local.rkey(), len));
        RdmaReadMsg m = new RdmaReadMsg(8, 0, ds);
        ByteBuffer b = ByteBuffer.allocate(dataLen + 8 + m.size()).order(ByteOrder.LITTLE_ENDIAN);
        b.position(dataLen);
        b.putLong(1);
        m.encode(b);
        return java.util.Arrays.copyOfRange(b.array(), dataLen, b.capacity());
    }

    @Test
    void protocolViolationsDisconnectOnlyThatClient() throws Exception {
        start(false);
        try (RawClient good = new RawClient(dev).connect(addr(), 2, "good");
             RawClient bad = new RawClient(dev).connect(addr(), 2, "bad")) {
            RawClient.Con con = bad.cons[1];
            SgDesc d = bad.info.descs().get(0);
            // a buffer id beyond the queue depth
            con.writeImm(new byte[4], d.addr(), d.key(), Imm.of(Imm.IO_REQ, (QD + 1) << Imm.offsetBits(QD)));
            assertEquals(CmEvent.Type.DISCONNECTED, con.event().type());
            byte[] payload = "still here".getBytes();
            assertEquals(0, io(good, 1, writeMsg(payload, 7, 8), payload.length + 8));
            assertArrayEquals(payload, stored.get(7L));
        }
        // garbage instead of CON_REQ: refused as Linux's server refuses it (rtrs_rdma_connect)
        try (RawClient liar = new RawClient(dev)) {
            byte[] bad = liar.conReq(0, 1, true);
            bad[2] = 0x12;
            RawClient.Con c = liar.new Con(addr(), bad);
            liar.cons = new RawClient.Con[] {c};
            CmEvent e = c.event();
            assertEquals(CmEvent.Type.REJECTED, e.type());
            ConRsp rsp = RawClient.answer(e);
            assertEquals(Errno.ECONNRESET, rsp.errno());
            assertFalse(rsp.has(ConRsp.DNR_F));
        }
    }

    /** What rtrs_rdma_connect refuses, refused the same way: a reject carrying a CON_RSP with the errno. */
    @Test
    void connectRequestsLinuxRefusesAreRefused() throws Exception {
        start(false);
        try (RawClient c = new RawClient(dev)) {
            // private data shorter than a CON_REQ
            assertEquals(Errno.ECONNRESET, refusal(c, java.util.Arrays.copyOf(c.conReq(0, 1, true), 40)));
            // cid not below cid_num
            assertEquals(Errno.ECONNRESET, refusal(c, c.conReq(2, 2, true)));
            // more than 4096 connections per path
            assertEquals(Errno.ECONNRESET, refusal(c, c.conReq(0, 4097, true)));
            // a session the server does not know, without first_conn
            assertEquals(Errno.ENXIO, refusal(c, c.conReq(0, 2, false)));
        }
        assertTrue(server.sessions().isEmpty(), "nothing was created for them");
        try (RawClient ok = new RawClient(dev).connect(addr(), 2, "fine")) {
            assertEquals(QD, ok.info.descs().size());
        }
    }

    private int refusal(RawClient c, byte[] privateData) throws Exception {
        RawClient.Con con = c.new Con(addr(), privateData);
        CmEvent e = con.event();
        assertEquals(CmEvent.Type.REJECTED, e.type());
        con.qp.close();
        return RawClient.answer(e).errno();
    }

    /** Linux's __is_path_w_addr_exists: a second path between the same two addresses is EEXIST. */
    @Test
    void secondPathBetweenTheSameAddressesIsRefusedWithEexist() throws Exception {
        start(false);
        try (RawClient first = new RawClient(dev).connect(addr(), 2, "twin");
             RawClient second = new RawClient(dev, first.sess, UUID.randomUUID())) {
            ConRsp r = second.hello(addr(), 2);
            assertEquals(Errno.EEXIST, r.errno());
        }
    }

    /** process_info_req: a session name with '/' or '.' is refused and the path closed. */
    @Test
    void sessionNameWithSlashOrDotClosesThePath() throws Exception {
        start(false);
        try (RawClient c = new RawClient(dev)) {
            RawClient.Con con = c.new Con(addr(), c.conReq(0, 1, true));
            c.cons = new RawClient.Con[] {con};
            assertEquals(CmEvent.Type.ESTABLISHED, con.event().type());
            con.send(io.rnbd.rtrs.proto.InfoReq.SIZE, new io.rnbd.rtrs.proto.InfoReq("a.b")::encode);
            assertEquals(CmEvent.Type.DISCONNECTED, con.event().type());
        }
    }

    @Test
    void staleRkeyIsRefusedByTheProvider() throws Exception {
        start(true);
        try (RawClient c = new RawClient(dev).connect(addr(), 2, "inval")) {
            assertTrue(c.conRsp.has(ConRsp.NEW_RKEY_F));
            SgDesc d = c.info.descs().get(3);
            byte[] payload = "first".getBytes();
            RawClient.Con con = c.cons[1];
            con.writeImm(writeMsg(payload, 1, 8), d.addr(), d.key(), writeImm(3, payload));
            WorkCompletion wc = con.recv();
            // rdma_write_sg/send_io_resp_imm: the RKEY_RSP is a SEND_WITH_IMM under IO_RSP
            // (IO_RSP_W_INV would say the server invalidated a read region of ours)
            assertEquals(io.rnbd.rdma.api.WcOpcode.RECV, wc.opcode());
            assertEquals(Imm.IO_RSP, Imm.type(wc.imm()));
            assertEquals(0, Imm.rspErrno(wc.imm()));
            RkeyRsp fresh = RkeyRsp.decode(con.data(wc));
            con.repost(wc);
            assertEquals(3, fresh.bufId());
            assertNotEquals(d.key(), fresh.rkey());
            // the old key is dead: the provider refuses the access without touching memory
            con.writeImm(writeMsg("stale".getBytes(), 2, 8), d.addr(), d.key(), writeImm(3, "stale".getBytes()));
            WorkCompletion refused = null;
            while (refused == null) {
                WorkCompletion s = con.sends.poll(10, TimeUnit.SECONDS);
                if (s == null) {
                    break;
                }
                if (!s.ok()) {
                    refused = s;
                }
            }
            assertTrue(refused != null, "stale rkey must fail");
            assertEquals(WcStatus.REM_ACCESS_ERR, refused.status());
            assertArrayEquals(payload, stored.get(1L));
            assertTrue(!stored.containsKey(2L));
        }
    }
}

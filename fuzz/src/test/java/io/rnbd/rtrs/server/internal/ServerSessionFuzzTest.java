package io.rnbd.rtrs.server.internal;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rnbd.fuzz.Findings;
import io.rnbd.fuzz.Loopback;
import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RecvWr;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WcOpcode;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.proto.Close;
import io.rnbd.rnbd.proto.Io;
import io.rnbd.rnbd.proto.Open;
import io.rnbd.rnbd.proto.SessInfo;
import io.rnbd.rnbd.server.internal.ExportConfig;
import io.rnbd.rnbd.server.internal.RnbdServer;
import io.rnbd.rtrs.proto.AuthMsg;
import io.rnbd.rtrs.proto.ConReq;
import io.rnbd.rtrs.proto.FenceReq;
import io.rnbd.rtrs.proto.Imm;
import io.rnbd.rtrs.proto.InfoReq;
import io.rnbd.rtrs.proto.InfoRsp;
import io.rnbd.rtrs.proto.RdmaReadMsg;
import io.rnbd.rtrs.proto.RdmaWriteMsg;
import io.rnbd.rtrs.proto.SgDesc;

import io.rnbd.testkit.block.FakeBackend;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * The RTRS server's state machine and the RNBD server above it, driven by a fake peer on
 * raw verbs (the soft provider): CON_REQ private data, the service messages (INFO_REQ, AUTH,
 * FENCE, garbage) and requests written into the server's chunks with any IMM, each part the
 * fuzzer's choice between a well-formed message and its own bytes. RNBD messages ride as
 * user headers, so SESS_INFO, OPEN, IO and CLOSE parsing and the export's checks run too.
 * After each input: no exception escaped the servers, and an honest client still gets a
 * session, opens the export and reads it.
 */
class ServerSessionFuzzTest {
    private static final int QD = 4;
    private static final int CHUNK = 16384;
    private static final int SLOT = 8192;

    private static SoftDevice serverDev;
    private static SoftDevice clientDev;
    private static ProtectionDomain pd;
    private static RtrsServer rtrs;
    private static InetSocketAddress addr;
    private static int inputs;

    private static synchronized void setUp() throws Exception {
        if (rtrs != null) {
            return;
        }
        serverDev = new SoftDevice("fzs", InetAddress.getByName("127.0.0.1"));
        clientDev = new SoftDevice("fzc", InetAddress.getByName("127.0.0.2"));
        pd = clientDev.allocPd();
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "fuzz-timer");
            t.setDaemon(true);
            return t;
        });
        RnbdServer rnbd = new RnbdServer(timer);
        rnbd.backendAdded("memory", new FakeBackend());
        rnbd.addExport(new ExportConfig("disk", "memory", false, Set.of(), 0,
                Map.of("id", "disk", "size", "1048576")));
        rnbd.addExport(new ExportConfig("vault", "memory", false, Set.of(), 0,
                Map.of("id", "vault", "size", "65536")).withAllowedHosts(Set.of("host-a"), false));
        rtrs = new RtrsServer(new ServerConfig(0, CHUNK, QD, true, 60_000, 5).withHandshake(2_000, 1_000),
                () -> rnbd, () -> null, timer, System::nanoTime);
        rtrs.add(serverDev);
        addr = rtrs.listenAddresses(serverDev).get(0);
    }

    /** One connection of the fake peer. */
    static final class Con implements AutoCloseable {
        final QueuePair qp;
        final MemoryRegion rx;
        final MemoryRegion tx;
        final BlockingQueue<WorkCompletion> recvs = new LinkedBlockingQueue<>();
        final BlockingQueue<CmEvent> events = new LinkedBlockingQueue<>();

        Con(byte[] conReq) throws RdmaException {
            rx = pd.register(ByteBuffer.allocateDirect(8 * SLOT), Access.of(Access.LOCAL_WRITE));
            tx = pd.register(ByteBuffer.allocateDirect(CHUNK), Access.all());
            qp = clientDev.connect(addr, new QpInit(pd, 64, 64, 1, (q, wc) -> {
                if (wc.opcode() == WcOpcode.RECV || wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM) {
                    recvs.add(wc);
                }
            }), conReq, (q, e) -> events.add(e));
            try {
                for (int i = 0; i < 8; i++) {
                    qp.postRecv(new RecvWr(i, List.of(new Sge(rx, i * SLOT, SLOT))));
                }
            } catch (RdmaException refused) {
                // rejected already: the event says so
            }
        }

        boolean established() throws InterruptedException {
            CmEvent e = events.poll(5, TimeUnit.SECONDS);
            assertNotNull(e, "the server answered no connect");
            return e.type() == CmEvent.Type.ESTABLISHED;
        }

        void send(byte[] msg) throws RdmaException {
            tx.buffer().put(0, msg, 0, Math.min(msg.length, CHUNK));
            qp.postSend(SendWr.send(1, List.of(new Sge(tx, 0, Math.min(msg.length, CHUNK)))));
        }

        /** The next SEND the server answers with, or null. */
        ByteBuffer recv(long ms) throws Exception {
            WorkCompletion wc = recvs.poll(ms, TimeUnit.MILLISECONDS);
            if (wc == null) {
                return null;
            }
            ByteBuffer b = rx.buffer().slice((int) wc.wrId() * SLOT, wc.byteLen()).order(ByteOrder.LITTLE_ENDIAN);
            ByteBuffer copy = ByteBuffer.allocate(b.remaining()).order(ByteOrder.LITTLE_ENDIAN).put(b).flip();
            qp.postRecv(new RecvWr(wc.wrId(), List.of(new Sge(rx, (int) wc.wrId() * SLOT, SLOT))));
            return copy;
        }

        /** RDMA-write {@code bytes} at {@code offset} of a server chunk, with {@code imm}. */
        void writeImm(byte[] bytes, long raddr, int rkey, int imm) throws RdmaException {
            int n = Math.min(bytes.length, CHUNK);
            tx.buffer().put(0, bytes, 0, n);
            qp.postSend(SendWr.writeWithImm(2, List.of(new Sge(tx, 0, n)), raddr, rkey, imm));
        }

        @Override
        public void close() {
            qp.close();
            rx.close();
            tx.close();
        }
    }

    private static byte[] bytes(ByteBuffer b) {
        b.flip();
        byte[] a = new byte[b.remaining()];
        b.get(a);
        return a;
    }

    /** A user header the fuzzer picks: a well-formed RNBD message or its own bytes. */
    private static byte[] rnbdHeader(FuzzedDataProvider in) {
        ByteBuffer b = ByteBuffer.allocate(Open.SIZE).order(ByteOrder.LITTLE_ENDIAN);
        switch (in.consumeInt(0, 5)) {
            case 0 -> new SessInfo(in.consumeInt(0, 3)).encode(b);
            case 1 -> new Open(AccessMode.values()[in.consumeInt(0, 2)],
                    in.consumeBoolean() ? "disk" : in.consumeBoolean() ? "vault" : in.consumeAsciiString(40)).encode(b);
            case 2 -> new Io(in.consumeInt(), in.consumeLong(), in.consumeInt(), in.consumeInt(), 0).encode(b);
            case 3 -> new Close(in.consumeInt()).encode(b);
            default -> {
                return in.consumeBytes(in.consumeInt(0, 300));
            }
        }
        return bytes(b);
    }

    @FuzzTest
    void session(FuzzedDataProvider in) throws Exception {
        Loopback.allow();
        setUp();
        try (Findings findings = Findings.watch()) {
            UUID sess = UUID.randomUUID();
            int cidNum = in.consumeInt(1, 3);
            boolean ext = in.consumeBoolean();
            Con[] cons = new Con[cidNum];
            try {
                for (int cid = 0; cid < cidNum; cid++) {
                    byte[] conReq = in.consumeInt(0, 9) == 0 ? in.consumeBytes(in.consumeInt(0, 56))
                            : new ConReq(cid, cidNum, 1, UUID.nameUUIDFromBytes(sess.toString().getBytes()), sess,
                                    true, ext).toBytes();
                    cons[cid] = new Con(conReq);
                    if (!cons[cid].established()) {
                        return;
                    }
                }
                try {
                    drive(in, cons);
                } catch (RdmaException dropped) {
                    // the fake peer's own post on a connection the server closed (it may close a
                    // misbehaving peer): an allowed answer, not a finding (a 60 s run stopped here)
                }
            } finally {
                for (Con c : cons) {
                    if (c != null) {
                        c.close();
                    }
                }
            }
            if (++inputs % 16 == 0) {
                assertHonestClientServed();
            }
            findings.assertNone();
        }
    }

    private static void drive(FuzzedDataProvider in, Con[] cons) throws Exception {
        InfoRsp info = null;
        int steps = in.consumeInt(1, 10);
        for (int i = 0; i < steps && in.remainingBytes() > 0; i++) {
            Con c = cons[in.consumeInt(0, cons.length - 1)];
            switch (in.consumeInt(0, 5)) {
                case 0 -> c.send(in.consumeBoolean() ? infoReq(in.consumeAsciiString(20))
                        : in.consumeBytes(in.consumeInt(0, 400)));
                case 1 -> {
                    AuthMsg m = AuthMsg.step(in.consumeBoolean() ? "none" : in.consumeAsciiString(16),
                            in.consumeBytes(in.consumeInt(0, 200)), in.consumeBoolean());
                    ByteBuffer b = ByteBuffer.allocate(m.size()).order(ByteOrder.LITTLE_ENDIAN);
                    m.encode(b);
                    c.send(bytes(b));
                }
                case 2 -> {
                    ByteBuffer b = ByteBuffer.allocate(FenceReq.SIZE).order(ByteOrder.LITTLE_ENDIAN);
                    new FenceReq(in.consumeInt(), UUID.randomUUID(), in.consumeInt(0, 0xffff)).encode(b);
                    c.send(bytes(b));
                }
                case 3 -> c.qp.postSend(SendWr.writeWithImm(3, List.of(), 0, 0, in.consumeInt()));
                default -> {
                    if (info == null) {
                        ByteBuffer r = cons[0].recv(300);
                        if (r != null) {
                            try {
                                info = InfoRsp.decode(r);
                            } catch (io.rnbd.rtrs.proto.ProtoException notInfo) {
                                // an AUTH answer or the like
                            }
                        }
                    }
                    request(in, c, info);
                }
            }
        }
        // let the server finish what the input started before the connections go
        cons[0].recv(50);
    }

    private static byte[] infoReq(String name) {
        ByteBuffer b = ByteBuffer.allocate(InfoReq.SIZE).order(ByteOrder.LITTLE_ENDIAN);
        new InfoReq(name.replace('/', '_').replace('.', '_')).encode(b);
        return bytes(b);
    }

    /** A request into a chunk, as rtrs-clt writes it: [data][user header][trailer], IMM IO_REQ. */
    private static void request(FuzzedDataProvider in, Con c, InfoRsp info) throws Exception {
        int buf = in.consumeInt(0, QD);
        SgDesc chunk = info == null || buf >= info.descs().size() ? new SgDesc(in.consumeLong(), in.consumeInt(), CHUNK)
                : info.descs().get(buf);
        byte[] hdr = rnbdHeader(in);
        int dataLen = in.consumeInt(0, 1024);
        ByteBuffer m = ByteBuffer.allocate(dataLen + hdr.length + RdmaReadMsg.size(1) + 16)
                .order(ByteOrder.LITTLE_ENDIAN);
        m.position(dataLen).put(hdr);
        if (in.consumeBoolean()) {
            new RdmaWriteMsg(hdr.length).encode(m);
        } else {
            List<SgDesc> descs = in.consumeBoolean() ? List.of()
                    : List.of(new SgDesc(c.tx.address(), c.tx.rkey(), in.consumeInt(0, CHUNK)));
            new RdmaReadMsg(hdr.length, in.consumeInt(0, 1), descs).encode(m);
        }
        int msgOff = in.consumeBoolean() ? dataLen + hdr.length : in.consumeInt(0, CHUNK);
        int imm = in.consumeBoolean() ? Imm.ioReq(Math.min(buf, QD - 1), Math.min(msgOff, CHUNK - 1),
                Imm.offsetBits(QD)) : in.consumeInt();
        c.writeImm(bytes(m), chunk.addr(), chunk.key(), imm);
    }

    /** An honest Linux-style client: connects, SESS_INFO, OPEN disk, answered. */
    private static void assertHonestClientServed() throws Exception {
        UUID sess = UUID.randomUUID();
        try (Con c = new Con(new ConReq(0, 1, 1, UUID.randomUUID(), sess, true, false).toBytes())) {
            assertEquals(true, c.established(), "an honest client is not accepted");
            c.send(infoReq("honest" + inputs));
            ByteBuffer r = c.recv(5000);
            assertNotNull(r, "no INFO_RSP for an honest client");
            SgDesc chunk = InfoRsp.decode(r).chunks(QD, CHUNK).get(0);
            ByteBuffer m = ByteBuffer.allocate(SessInfo.SIZE + RdmaReadMsg.size(1)).order(ByteOrder.LITTLE_ENDIAN);
            new SessInfo(2).encode(m);
            new RdmaReadMsg(SessInfo.SIZE, 0, List.of(new SgDesc(c.tx.address() + CHUNK / 2, c.tx.rkey(), 36)))
                    .encode(m);
            c.writeImm(bytes(m), chunk.addr() + 36, chunk.key(), Imm.ioReq(0, 36 + SessInfo.SIZE, Imm.offsetBits(QD)));
            WorkCompletion wc = c.recvs.poll(5, TimeUnit.SECONDS);
            assertNotNull(wc, "no answer to an honest SESS_INFO");
            assertEquals(0, Imm.rspErrno(wc.imm()), "an honest SESS_INFO failed");
        }
    }
}

package io.rnbd.rdma.soft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import io.rnbd.testkit.rdma.Endpoint;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Acknowledgements on the wire, seen by a hand-written initiator: a target acknowledges an
 * unsignaled request only with the next frame it sends anyway, a signaled one at once, and
 * drops a peer that acknowledges what was never sent.
 */
class SoftAckTest {
    private SoftDevice server;
    private SoftDevice client;
    private ProtectionDomain spd;
    private MemoryRegion region;
    private final Endpoint ep = new Endpoint("server");
    private final CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
    private CmListener listener;

    @BeforeEach
    void open() throws Exception {
        server = new SoftDevice("srv", InetAddress.getByName("127.0.0.1"));
        client = new SoftDevice("cli", InetAddress.getByName("127.0.0.2"));
        spd = server.allocPd();
        region = spd.register(ByteBuffer.allocateDirect(4096), Access.all());
        MemoryRegion rbuf = spd.register(ByteBuffer.allocateDirect(4 * 256), Access.all());
        listener = server.listen(new InetSocketAddress(server.address(), 0), req -> {
            try {
                QueuePair qp = req.accept(new QpInit(spd, 64, 64, 1, ep), ep);
                for (int i = 0; i < 4; i++) {
                    qp.postRecv(new RecvWr(i, List.of(new Sge(rbuf, i * 256, 256))));
                }
                accepted.complete(qp);
            } catch (RdmaException e) {
                accepted.completeExceptionally(e);
            }
        });
    }

    @AfterEach
    void close() {
        client.close();
        server.close();
    }

    /** A connected hand-written initiator. */
    private Socket connect() throws Exception {
        Socket s = new Socket(listener.localAddress().getAddress(), listener.localAddress().getPort());
        s.setSoTimeout(10_000);
        s.getOutputStream().write(frame(Wire.HELLO, (byte) 0, 0, Wire.MAGIC, 0, 0, 0));
        assertEquals(Wire.ACCEPT, header(s.getInputStream()).get(0));
        ep.nextEvent(CmEvent.Type.ESTABLISHED);
        return s;
    }

    private static byte[] frame(byte type, byte flags, int len, long addr, int rkey, int acked, int fill) {
        ByteBuffer b = ByteBuffer.allocate(Wire.HDR + len).order(ByteOrder.LITTLE_ENDIAN);
        Wire.put(b, type, Wire.ST_OK, flags, len, addr, rkey, 0, 0, acked);
        while (b.hasRemaining()) {
            b.put((byte) fill);
        }
        return b.array();
    }

    private static ByteBuffer header(InputStream in) throws Exception {
        return ByteBuffer.wrap(in.readNBytes(Wire.HDR)).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Test
    void unsignaledRequestsAreAcknowledgedOnlyTogetherWithTheNextSignaledOne() throws Exception {
        try (Socket s = connect()) {
            s.getOutputStream().write(frame(Wire.WRITE, (byte) 0, 8, region.address(), region.rkey(), 0, 0x11));
            s.getOutputStream().write(frame(Wire.SEND, (byte) 0, 16, 0, 0, 0, 0x33));
            // the SEND's RECV completion: both placed, so an eager target would have acknowledged them by now
            assertEquals(16, ep.nextWc(WcStatus.SUCCESS).byteLen());
            assertEquals(0x11, region.buffer().get(7));
            s.getOutputStream().write(frame(Wire.WRITE, Wire.ACK_REQ, 8, region.address() + 8, region.rkey(), 0,
                    0x22));
            ByteBuffer h = header(s.getInputStream());
            assertEquals(Wire.ACK, Wire.type(h, 0));
            assertEquals(Wire.ST_OK, Wire.status(h, 0));
            assertEquals(3, Wire.acked(h, 0), "one ACK for all three requests");
            assertEquals(0x22, region.buffer().get(15));
        }
    }

    @Test
    void acknowledgementRidesOnTheAnswerInsteadOfAFrameOfItsOwn() throws Exception {
        try (Socket s = connect()) {
            QueuePair qp = accepted.get(10, TimeUnit.SECONDS);
            s.getOutputStream().write(frame(Wire.SEND, (byte) 0, 16, 0, 0, 0, 0x33));
            assertEquals(16, ep.nextWc(WcStatus.SUCCESS).byteLen());
            qp.postSend(SendWr.send(9, List.of(new Sge(region, 0, 4))).unsignaled());
            ByteBuffer h = header(s.getInputStream());
            assertEquals(Wire.SEND, Wire.type(h, 0), "the answer comes first, with no ACK frame before it");
            assertEquals(1, Wire.acked(h, 0));
            assertEquals(0, Wire.flags(h, 0), "an unsignaled SEND does not ask for an ACK");
        }
    }

    @Test
    void acknowledgingRequestsNeverSentDropsThatPeerOnly() throws Exception {
        try (Socket s = connect()) {
            s.getOutputStream().write(frame(Wire.ACK, (byte) 0, 0, 0, 0, 5, 0));
            ep.nextEvent(CmEvent.Type.DISCONNECTED);
            assertEquals(-1, drain(s.getInputStream()));
        }
        assertStillServes();
    }

    @Test
    void unknownFlagsDropThatPeerOnly() throws Exception {
        try (Socket s = connect()) {
            s.getOutputStream().write(frame(Wire.SEND, (byte) 0x80, 4, 0, 0, 0, 0));
            ep.nextEvent(CmEvent.Type.DISCONNECTED);
            assertEquals(-1, drain(s.getInputStream()));
        }
        assertStillServes();
    }

    private static int drain(InputStream in) throws Exception {
        byte[] b = new byte[4096];
        while (in.read(b) >= 0) {
            // until the target closes
        }
        return -1;
    }

    private void assertStillServes() throws Exception {
        Endpoint c = new Endpoint("client");
        Endpoint srv = new Endpoint("server2");
        MemoryRegion rbuf = spd.register(ByteBuffer.allocateDirect(64), Access.all());
        CmListener l = server.listen(new InetSocketAddress(server.address(), 0), req -> {
            try {
                req.accept(new QpInit(spd, 8, 8, 1, srv), srv).postRecv(new RecvWr(1, List.of(Sge.whole(rbuf))));
            } catch (RdmaException e) {
                throw new IllegalStateException(e);
            }
        });
        ProtectionDomain cpd = client.allocPd();
        QueuePair qp = client.connect(l.localAddress(), new QpInit(cpd, 8, 8, 1, c), null, c);
        c.nextEvent(CmEvent.Type.ESTABLISHED);
        MemoryRegion m = cpd.register(ByteBuffer.allocateDirect(64), Access.all());
        qp.postSend(SendWr.send(1, List.of(new Sge(m, 0, 10))));
        c.nextWc(WcStatus.SUCCESS);
        assertEquals(10, srv.nextWc(WcStatus.SUCCESS).byteLen());
        qp.close();
    }
}

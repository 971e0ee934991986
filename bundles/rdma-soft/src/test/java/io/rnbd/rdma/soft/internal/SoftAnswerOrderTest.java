package io.rnbd.rdma.soft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEventHandler;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.CompletionHandler;
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

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * When several connections of one device are ready together, the answers that one
 * connection's completions posted leave before the next connection's completions run. A
 * target that wrote every answer only after the whole round held the first peer's answers
 * back for the time it spent on everyone else's requests: at depth 32 over the two IO
 * connections of an RTRS path that cost a tenth of the read IOPS (docs/perf.md, session 6).
 *
 * <p>Hand-written initiators make it deterministic: while the device's thread is held in a
 * completion handler, two peers each send one request; the handler of whichever request
 * runs second then reads the first peer's answer from its socket, which it can only get if
 * that answer left before this handler ran.
 */
class SoftAnswerOrderTest {
    private static final byte GATE = 1;
    private static final byte REQUEST = 2;

    private SoftDevice server;
    private ProtectionDomain spd;
    private MemoryRegion recvBuf;
    private MemoryRegion answerBuf;
    private CmListener listener;
    private final Map<QueuePair, Socket> peerOf = new ConcurrentHashMap<>();
    private final LinkedBlockingQueue<QueuePair> accepted = new LinkedBlockingQueue<>();
    private final CountDownLatch gateEntered = new CountDownLatch(1);
    private final CountDownLatch gateOpen = new CountDownLatch(1);
    private final LinkedBlockingQueue<String> outcomes = new LinkedBlockingQueue<>();
    private volatile QueuePair answeredFirst;

    @BeforeEach
    void open() throws Exception {
        server = new SoftDevice("srv", InetAddress.getByName("127.0.0.1"));
        spd = server.allocPd();
        recvBuf = spd.register(ByteBuffer.allocateDirect(2 * 4 * 64), Access.all());
        answerBuf = spd.register(ByteBuffer.allocateDirect(64), Access.all());
        CompletionHandler onWc = this::onCompletion;
        CmEventHandler onEvent = (qp, e) -> { };
        listener = server.listen(new InetSocketAddress(server.address(), 0), req -> {
            try {
                QueuePair qp = req.accept(new QpInit(spd, 16, 16, 1, onWc), onEvent);
                int base = accepted.size() * 4;
                for (int i = 0; i < 4; i++) {
                    qp.postRecv(new RecvWr(base + i, List.of(new Sge(recvBuf, (base + i) * 64, 64))));
                }
                accepted.add(qp);
            } catch (RdmaException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @AfterEach
    void close() throws Exception {
        for (Socket s : peerOf.values()) {
            s.close();
        }
        server.close();
    }

    /** On the device's thread: the gate holds it; a request is answered, and the second checks the first's answer left. */
    private void onCompletion(QueuePair qp, WorkCompletion wc) {
        if (!wc.ok() || wc.opcode() != WcOpcode.RECV) {
            return;
        }
        byte kind = recvBuf.buffer().get((int) wc.wrId() * 64);
        if (kind == GATE) {
            gateEntered.countDown();
            await(gateOpen);
            return;
        }
        try {
            qp.postSend(SendWr.send(wc.wrId(), List.of(new Sge(answerBuf, 0, 8))));
        } catch (RdmaException e) {
            outcomes.add("post failed: " + e.getMessage());
            return;
        }
        QueuePair first = answeredFirst;
        if (first == null) {
            answeredFirst = qp;
            return;
        }
        try {
            InputStream in = peerOf.get(first).getInputStream();
            ByteBuffer h = ByteBuffer.wrap(in.readNBytes(Wire.HDR)).order(ByteOrder.LITTLE_ENDIAN);
            outcomes.add(Wire.type(h, 0) == Wire.SEND ? "answered" : "frame " + Wire.type(h, 0));
        } catch (SocketTimeoutException e) {
            outcomes.add("the first peer's answer was still held when the second request ran");
        } catch (Exception e) {
            outcomes.add("reading the first answer failed: " + e);
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A connected hand-written initiator, and the queue pair the device gave it. */
    private Socket connect() throws Exception {
        Socket s = new Socket(listener.localAddress().getAddress(), listener.localAddress().getPort());
        s.setSoTimeout(2_000);
        s.setTcpNoDelay(true); // both requests must be in the device's socket buffers before the gate opens
        s.getOutputStream().write(frame(Wire.HELLO, 0, Wire.MAGIC, (byte) 0));
        ByteBuffer h = ByteBuffer.wrap(s.getInputStream().readNBytes(Wire.HDR)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(Wire.ACCEPT, h.get(0));
        QueuePair qp = accepted.poll(10, TimeUnit.SECONDS);
        peerOf.put(qp, s);
        return s;
    }

    private static byte[] frame(byte type, int len, long addr, byte fill) {
        ByteBuffer b = ByteBuffer.allocate(Wire.HDR + len).order(ByteOrder.LITTLE_ENDIAN);
        Wire.put(b, type, Wire.ST_OK, (byte) 0, len, addr, 0, 0, 0, 0);
        while (b.hasRemaining()) {
            b.put(fill);
        }
        return b.array();
    }

    @Test
    void aConnectionsAnswersLeaveBeforeTheNextReadyConnectionIsServed() throws Exception {
        Socket a = connect();
        Socket b = connect();
        a.getOutputStream().write(frame(Wire.SEND, 8, 0, GATE));
        assertTrue(gateEntered.await(10, TimeUnit.SECONDS), "the gate request reached its handler");
        // the device's thread is in the gate's handler: both requests wait in their sockets
        a.getOutputStream().write(frame(Wire.SEND, 8, 0, REQUEST));
        b.getOutputStream().write(frame(Wire.SEND, 8, 0, REQUEST));
        gateOpen.countDown();
        assertEquals("answered", outcomes.poll(10, TimeUnit.SECONDS));
    }
}

package io.rnbd.rdma.soft.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.testkit.rdma.Endpoint;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Where a large payload lands: a run of 128 KiB RDMA WRITEs (an RNBD client's large writes,
 * a server's large read answers) goes from the socket straight into the target region, not
 * through the receive side's staging buffer and a copy, except for the first frame's part
 * that came with its header (at most the buffer's size).
 */
class SoftRxPlacementTest {
    private static final int FRAME = 128 * 1024;
    private static final int FRAMES = 8;
    /** Small WRITEs after the large ones: read many to a read again once the run is over. */
    private static final int SMALL = 100;
    private static final int SMALLS = 16;

    private SoftDevice server;
    private ProtectionDomain pd;

    @BeforeEach
    void open() throws Exception {
        server = new SoftDevice("srv", InetAddress.getByName("127.0.0.1"));
        pd = server.allocPd();
    }

    @AfterEach
    void close() {
        server.close();
    }

    @Test
    void aRunOfLargeWritesIsReadInPlaceAndSmallOnesAfterItStillLand() throws Exception {
        MemoryRegion target = pd.register(ByteBuffer.allocateDirect(FRAMES * FRAME + SMALLS * SMALL), Access.all());
        Endpoint ep = new Endpoint("server");
        CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
        CmListener l = server.listen(new InetSocketAddress(server.address(), 0), req -> {
            try {
                accepted.complete(req.accept(new QpInit(pd, 64, 64, 1, ep), ep));
            } catch (RdmaException e) {
                accepted.completeExceptionally(e);
            }
        });
        byte[] data = new byte[FRAMES * FRAME + SMALLS * SMALL];
        new Random(11).nextBytes(data);
        try (Socket s = new Socket(l.localAddress().getAddress(), l.localAddress().getPort())) {
            s.setSoTimeout(10_000);
            ByteBuffer hello = ByteBuffer.allocate(Wire.HDR).order(ByteOrder.LITTLE_ENDIAN);
            Wire.put(hello, Wire.HELLO, Wire.ST_OK, 0, Wire.MAGIC, 0, 0, 0);
            s.getOutputStream().write(hello.array());
            assertEquals(Wire.ACCEPT, s.getInputStream().readNBytes(Wire.HDR)[0]);
            SoftQp qp = (SoftQp) accepted.get(10, TimeUnit.SECONDS);
            // every frame in one write: the receiver finds them queued back to back, which is
            // when a full-size staging read would take most of each payload with its header
            ByteBuffer frames = ByteBuffer.allocate(FRAMES * (Wire.HDR + FRAME) + SMALLS * (Wire.HDR + SMALL))
                    .order(ByteOrder.LITTLE_ENDIAN);
            for (int f = 0; f < FRAMES; f++) {
                Wire.put(frames, Wire.WRITE, Wire.ST_OK, (byte) 0, FRAME, target.address() + (long) f * FRAME,
                        target.rkey(), 0, 0, 0);
                frames.put(data, f * FRAME, FRAME);
            }
            for (int f = 0, at = FRAMES * FRAME; f < SMALLS; f++, at += SMALL) {
                // the last asks to be acknowledged at once: frames are taken in order, so the
                // acknowledgement that covers it says every byte before it is in place
                byte flags = f == SMALLS - 1 ? Wire.ACK_REQ : 0;
                Wire.put(frames, Wire.WRITE, Wire.ST_OK, flags, SMALL, target.address() + at, target.rkey(), 0, 0, 0);
                frames.put(data, at, SMALL);
            }
            s.getOutputStream().write(frames.array());
            int acked = 0;
            while (acked < FRAMES + SMALLS) { // each read waits at most the socket's timeout
                ByteBuffer ack = ByteBuffer.wrap(s.getInputStream().readNBytes(Wire.HDR)).order(ByteOrder.LITTLE_ENDIAN);
                assertEquals(Wire.HDR, ack.capacity(), "connection closed after " + acked + " acknowledged");
                assertEquals(Wire.ACK, Wire.type(ack, 0));
                acked += Wire.acked(ack, 0);
            }
            byte[] landed = new byte[data.length];
            target.buffer().get(0, landed);
            assertArrayEquals(data, landed, "every byte of every WRITE in its place");
            long staged;
            qp.lock.lock(); // the reactor counts under the QP's lock
            try {
                staged = qp.rx.stagedPayloadBytes();
            } finally {
                qp.lock.unlock();
            }
            assertTrue(staged <= SoftQpRx.IN_SIZE + SMALLS * SMALL,
                    "copied out of the staging buffer: " + staged + " bytes of " + data.length);
        }
    }
}

package io.rnbd.rtrs.client.internal;

import io.rnbd.rdma.api.WcStatus;
import io.rnbd.rdma.core.internal.DeviceRegistry;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.rtrs.proto.SgDesc;
import io.rnbd.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * Issue 21 item 3: a server may RDMA-write into the client's memory only the pages of a
 * read in flight, and only until that read is answered. The server here is the raw-verbs
 * Linux-style peer, which does what a hostile server could do with the descriptors it was
 * given: write with an old rkey after the answer, and write beside the pages it was given.
 * Before the change the client registered its whole buffer remote-writable once per path,
 * and every one of those writes succeeded.
 */
class ReadExposureTest {
    private static final int LEN = 4096;
    private SoftDevice dev;
    private final DeviceRegistry registry = new DeviceRegistry();
    private final DeviceSet devices = new DeviceSet();
    private final ScheduledExecutorService timer = Executors.newScheduledThreadPool(2);
    private final List<AutoCloseable> closers = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        dev = new SoftDevice("soft-rx", InetAddress.getByName("127.0.0.1"));
        registry.addDevice(dev);
        registry.addClient(devices);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closers.size() - 1; i >= 0; i--) {
            closers.get(i).close();
        }
        registry.close();
        timer.shutdownNow();
        timer.awaitTermination(5, TimeUnit.SECONDS);
        dev.close();
    }

    private ClientSession connect(LinuxStyleServer srv, String name) throws Exception {
        closers.add(srv);
        ClientConfig cfg = ClientConfig.of(name, List.of(srv.path())).withTimings(50, 0, 10_000, 5000, 5).withCons(2);
        ClientSession s = new ClientSession(cfg, devices, () -> null, timer, System::nanoTime);
        closers.add(s::close);
        Await.until("connected", () -> s.state() == SessionState.CONNECTED);
        return s;
    }

    /**
     * A read's buffer: heap memory goes through the permit's buffer (registered for the read
     * and copied out), direct memory is registered itself, the data landing in place.
     */
    private static ByteBuffer buffer(int len, boolean direct) {
        return direct ? ByteBuffer.allocateDirect(len) : ByteBuffer.allocate(len);
    }

    private static byte[] readBack(ClientSession s, long offset, int len, boolean direct) throws Exception {
        ByteBuffer dst = buffer(len, direct);
        CompletableFuture<Integer> f = new CompletableFuture<>();
        s.read(MemoryOps.hdr(offset), dst, f::complete);
        assertEquals(0, f.get(10, TimeUnit.SECONDS));
        byte[] out = new byte[len];
        dst.get(0, out);
        return out;
    }

    /**
     * After an answered read, a write with that read's rkey and address is refused; and each
     * read gets a key of its own, so a key learnt from one read is no use for the next.
     */
    @ParameterizedTest
    @CsvSource({"false,false", "true,false", "false,true", "true,true"})
    void aReadsRkeyDiesWithItsAnswer(boolean alwaysInvalidate, boolean direct) throws Exception {
        LinuxStyleServer srv = new LinuxStyleServer(dev, alwaysInvalidate);
        ClientSession s = connect(srv, "rx1");
        byte[] block = new byte[LEN];
        new Random(21).nextBytes(block);
        CompletableFuture<Integer> w = new CompletableFuture<>();
        s.write(MemoryOps.hdr(0), ByteBuffer.wrap(block), w::complete);
        assertEquals(0, w.get(10, TimeUnit.SECONDS));

        // the server's own data write with the descriptor worked: the data arrived
        assertArrayEquals(block, readBack(s, 0, LEN, direct));
        assertArrayEquals(block, readBack(s, 0, LEN, direct));
        assertEquals(2, srv.reads.size());
        SgDesc first = srv.reads.get(0).desc();
        SgDesc second = srv.reads.get(1).desc();
        assertEquals(LEN, first.len(), "the descriptor names exactly the read's bytes");

        LinuxStyleServer.ReadSeen last = srv.reads.get(1);
        WcStatus late = srv.probeWrite(last.qp(), second.addr(), second.key(), 512).get(10, TimeUnit.SECONDS);
        assertEquals(WcStatus.REM_ACCESS_ERR, late, "a write into an answered read's pages");
        assertNotEquals(first.key(), second.key(), "every read is exposed under a key of its own");
        // the refusal failed the path (as on an adapter); once back, the refused write had
        // changed nothing the client reads
        assertArrayEquals(block, readBack(s, 0, LEN, direct));
    }

    /**
     * While a read is in flight its own pages take the server's write, and the bytes either
     * side of them (the rest of the client's buffer) do not.
     */
    @ParameterizedTest
    @CsvSource({"false,false", "true,false", "false,true", "true,true"})
    void onlyThePagesOfTheReadInFlightAreWritable(boolean alwaysInvalidate, boolean direct) throws Exception {
        LinuxStyleServer srv = new LinuxStyleServer(dev, alwaysInvalidate);
        ClientSession s = connect(srv, "rx2");
        srv.holdReads = true;
        // a second read first, so the one probed does not sit at the start of the buffer
        s.read(MemoryOps.hdr(0), buffer(LEN, direct), e -> { });
        s.read(MemoryOps.hdr(LEN), buffer(LEN, direct), e -> { });
        Await.until("both reads at the server", () -> srv.reads.size() == 2);
        LinuxStyleServer.ReadSeen held = srv.reads.get(1);
        SgDesc d = held.desc();
        // the control: the read's own pages are writable, so the refusals below are about the range
        assertEquals(WcStatus.SUCCESS, srv.probeWrite(held.qp(), d.addr(), d.key(), LEN).get(10, TimeUnit.SECONDS));
        assertEquals(WcStatus.REM_ACCESS_ERR,
                srv.probeWrite(held.qp(), d.addr() + d.len(), d.key(), 512).get(10, TimeUnit.SECONDS),
                "the bytes after the read's");

        // the refusal failed the path, as on an adapter; the client resends both reads on the
        // next connection, and the higher of them has a neighbour below
        Await.until("both reads sent again", () -> srv.reads.size() >= 4);
        LinuxStyleServer.ReadSeen upper = srv.reads.get(2).desc().addr() > srv.reads.get(3).desc().addr()
                ? srv.reads.get(2) : srv.reads.get(3);
        SgDesc u = upper.desc();
        assertNotEquals(d.key(), u.key(), "a resent read is exposed under a new key");
        assertEquals(WcStatus.REM_ACCESS_ERR,
                srv.probeWrite(upper.qp(), u.addr() - LEN, u.key(), 512).get(10, TimeUnit.SECONDS),
                "the page before the read's");
    }
}

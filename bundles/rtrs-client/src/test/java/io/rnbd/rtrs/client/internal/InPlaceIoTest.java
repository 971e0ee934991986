package io.rnbd.rtrs.client.internal;

import io.rnbd.rtrs.server.internal.ServerConfig;
import io.rnbd.testkit.Await;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Data in place: a read into direct memory lands there (the caller's buffer is the read's
 * registered region), a large write from direct memory is sent from there (two SGEs: the
 * data, then the header from the permit's buffer); nothing is copied through the permit's
 * buffer. The same data must arrive as through the copy, across a path failing mid-IO.
 */
class InPlaceIoTest {
    private static final int LEN = 64 * 1024;
    private static final int BLOCKS = 32;

    @Test
    void whichRequestsGoInPlace() {
        ByteBuffer hdr = MemoryOps.hdr(0);
        assertTrue(new ClientRequest(false, hdr, ByteBuffer.allocateDirect(4096), e -> { }).inPlace,
                "a read into direct memory");
        assertFalse(new ClientRequest(false, hdr, ByteBuffer.allocate(4096), e -> { }).inPlace,
                "a read into the heap: an adapter cannot reach it");
        assertTrue(new ClientRequest(true, hdr, ByteBuffer.allocateDirect(ClientRequest.WRITE_IN_PLACE_MIN), e -> { })
                .inPlace, "a large write from direct memory");
        assertFalse(new ClientRequest(true, hdr, ByteBuffer.allocateDirect(ClientRequest.WRITE_IN_PLACE_MIN - 512),
                e -> { }).inPlace, "a small write: the copy is cheaper than a registration");
        assertFalse(new ClientRequest(true, hdr, ByteBuffer.allocate(LEN), e -> { }).inPlace, "a write from the heap");
        assertFalse(new ClientRequest(false, hdr, ByteBuffer.allocateDirect(0), e -> { }).inPlace, "no data");
    }

    @Test
    void inPlaceWritesAndReadsCarryTheDataAcrossAFailover() throws Exception {
        try (SoftFixture f = new SoftFixture(new ServerConfig(0, 128 * 1024, 64, true, 5000, 5))) {
            ClientSession s = f.open(f.config("inplace", f.path(f.dev1), f.path(f.dev2)));
            FailoverTest.bothConnected(s);
            List<CompletableFuture<Integer>> writes = new ArrayList<>();
            AtomicInteger calls = new AtomicInteger();
            for (int b = 0; b < BLOCKS; b++) {
                ByteBuffer data = direct(Patterns.block(b, 1, LEN));
                CompletableFuture<Integer> w = new CompletableFuture<>();
                s.write(MemoryOps.hdr((long) b * LEN), data, e -> {
                    calls.incrementAndGet();
                    w.complete(e);
                });
                writes.add(w);
                if (b == BLOCKS / 2) {
                    f.server.remove(f.dev2); // one path goes mid-stream: what it had goes over the other
                }
            }
            for (CompletableFuture<Integer> w : writes) {
                assertEquals(0, w.get(60, TimeUnit.SECONDS));
            }
            assertEquals(BLOCKS, calls.get(), "every write completed exactly once");
            for (int b = 0; b < BLOCKS; b++) {
                byte[] got = new byte[LEN];
                System.arraycopy(f.ops.disk, b * LEN, got, 0, LEN);
                assertArrayEquals(Patterns.block(b, 1, LEN).array(), got, "block " + b + " on the server");
            }
            for (int b = 0; b < BLOCKS; b++) {
                ByteBuffer dst = ByteBuffer.allocateDirect(LEN);
                CompletableFuture<Integer> r = new CompletableFuture<>();
                s.read(MemoryOps.hdr((long) b * LEN), dst, r::complete);
                assertEquals(0, r.get(60, TimeUnit.SECONDS));
                byte[] got = new byte[LEN];
                dst.get(0, got);
                assertArrayEquals(Patterns.block(b, 1, LEN).array(), got, "block " + b + " read back");
            }
            Await.until("the session still serves", () -> s.state() == io.rnbd.rtrs.api.SessionState.CONNECTED);
        }
    }

    private static ByteBuffer direct(ByteBuffer heap) {
        ByteBuffer d = ByteBuffer.allocateDirect(heap.remaining());
        d.put(heap.duplicate()).flip();
        return d;
    }
}

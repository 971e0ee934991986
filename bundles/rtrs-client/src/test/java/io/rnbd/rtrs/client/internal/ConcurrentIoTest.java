package io.rnbd.rtrs.client.internal;

import io.rnbd.rtrs.api.RtrsClientPathInfo;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.testkit.Await;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Thousands of concurrent, checksummed IOs over two soft paths, always_invalidate on. */
class ConcurrentIoTest {
    static final int BLOCKS = 512;
    static final int SLOT = 8192;

    @Test
    void thousandsOfVerifiedIosOverTwoPaths() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(true))) {
            ClientSession s = f.open(f.config("many", f.path(f.dev1), f.path(f.dev2)));
            Await.until("both paths connected", () -> s.pathInfo().stream()
                    .allMatch(p -> p.state() == io.rnbd.rtrs.api.PathState.CONNECTED));
            assertEquals(SessionState.CONNECTED, s.state());
            for (int round = 1; round <= 3; round++) {
                writeAll(s, round);
                readAndVerifyAll(s, round);
            }
            long w = 0;
            for (RtrsClientPathInfo p : s.pathInfo()) {
                assertTrue(p.stats().io().writes() > 100, "both paths carry IO: " + p);
                w += p.stats().io().writes();
                assertTrue(p.stats().ioLatencyNanos() > 0);
            }
            assertEquals(3 * BLOCKS, w);
            assertEquals(0, f.server.sessions().get(0).stats().inflight());
        }
    }

    static int len(int block, int round) {
        return 8 + ((block * 31 + round * 977) % (SLOT - 8));
    }

    static void writeAll(ClientSession s, int round) throws Exception {
        List<CompletableFuture<Integer>> fs = new ArrayList<>();
        AtomicInteger calls = new AtomicInteger();
        for (int b = 0; b < BLOCKS; b++) {
            CompletableFuture<Integer> c = new CompletableFuture<>();
            s.write(MemoryOps.hdr((long) b * SLOT), Patterns.block(b, round, len(b, round)), e -> {
                calls.incrementAndGet();
                c.complete(e);
            });
            fs.add(c);
        }
        for (CompletableFuture<Integer> c : fs) {
            assertEquals(0, c.get(30, TimeUnit.SECONDS));
        }
        assertEquals(BLOCKS, calls.get());
    }

    static void readAndVerifyAll(ClientSession s, int round) throws Exception {
        List<CompletableFuture<Integer>> fs = new ArrayList<>();
        List<ByteBuffer> dsts = new ArrayList<>();
        for (int b = 0; b < BLOCKS; b++) {
            CompletableFuture<Integer> c = new CompletableFuture<>();
            ByteBuffer dst = ByteBuffer.allocate(len(b, round));
            dsts.add(dst);
            s.read(MemoryOps.hdr((long) b * SLOT), dst, c::complete);
            fs.add(c);
        }
        for (int b = 0; b < BLOCKS; b++) {
            assertEquals(0, fs.get(b).get(30, TimeUnit.SECONDS));
            assertEquals(Patterns.crc(Patterns.block(b, round, len(b, round))), Patterns.crc(dsts.get(b)),
                    "block " + b + " round " + round);
        }
    }
}

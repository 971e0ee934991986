package io.rnbd.rtrs.client.internal;

import io.rnbd.rtrs.api.SessionState;
import io.rnbd.testkit.Await;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class BasicIoTest {
    @Test
    void writeThenReadBackOverOnePath() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(false))) {
            ClientSession s = f.open(f.config("basic", f.path(f.dev1)));
            Await.until("connected", () -> s.state() == SessionState.CONNECTED);
            assertEquals(64, s.queueDepth());
            byte[] data = new byte[5000];
            for (int i = 0; i < data.length; i++) {
                data[i] = (byte) (i * 7);
            }
            CompletableFuture<Integer> w = new CompletableFuture<>();
            s.write(MemoryOps.hdr(4096), ByteBuffer.wrap(data), w::complete);
            assertEquals(0, w.get(10, TimeUnit.SECONDS));
            ByteBuffer dst = ByteBuffer.allocate(5000);
            CompletableFuture<Integer> r = new CompletableFuture<>();
            s.read(MemoryOps.hdr(4096), dst, r::complete);
            assertEquals(0, r.get(10, TimeUnit.SECONDS));
            assertArrayEquals(data, dst.array());
        }
    }
}

package io.rnbd.nbd.gateway.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.nbd.gateway.testing.SoftRnbdStack;
import io.rnbd.rdma.api.CompletionBatch;
import io.rnbd.rdma.api.CompletionThread;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The layers between the provider and the gateway (rtrs-client's {@code IoDone}, rnbd-client's
 * pieces and futures) carry the completion pass by running on the provider's thread: a mapped
 * device's futures complete on the soft device's IO thread, inside its open
 * {@link CompletionBatch}, which is where {@link ReplyWriter} looks for it. Were a layer to hand
 * its completions to a thread of its own, the gateway's replies would leave one write each again
 * (the NBD side of that is {@code NbdServerTest.theRepliesOfACompletionBatchLeaveInOneWriteAtItsEnd}).
 * Over the real stack: RNBD over RTRS over two soft RDMA devices.
 */
@Timeout(90)
class StackCompletionPassTest {
    @Test
    void aMappedDevicesCompletionsArriveInsideTheProvidersOpenPass() throws Exception {
        try (SoftRnbdStack stack = new SoftRnbdStack(128 * 1024).export("mem0", 16L << 20)) {
            RemoteBlockDevice dev = stack.map("rnbd0", "mem0");
            AtomicInteger onProvider = new AtomicInteger();
            AtomicInteger outside = new AtomicInteger();
            for (int round = 0; round < 20; round++) {
                List<CompletableFuture<Void>> io = new ArrayList<>();
                for (int i = 0; i < 32; i++) {
                    io.add(dev.read(i * 4096L, ByteBuffer.allocateDirect(4096)).whenComplete((v, t) -> {
                        Thread on = Thread.currentThread();
                        if (on instanceof CompletionThread) {
                            onProvider.incrementAndGet();
                            if (!CompletionBatch.ofCurrentThread().open()) {
                                outside.incrementAndGet();
                            }
                        }
                    }));
                }
                for (CompletableFuture<Void> f : io) {
                    f.get(10, TimeUnit.SECONDS);
                }
            }
            assertTrue(onProvider.get() > 0, "no read completed on the provider's completion thread");
            assertEquals(0, outside.get(), "completions on the provider's thread outside its open pass, of "
                    + onProvider.get());
        }
    }
}

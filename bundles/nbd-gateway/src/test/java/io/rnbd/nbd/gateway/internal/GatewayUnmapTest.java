package io.rnbd.nbd.gateway.internal;

import static org.junit.jupiter.api.Assertions.*;

import io.rnbd.common.Errno;
import io.rnbd.nbd.client.NbdClient;
import io.rnbd.nbd.gateway.testing.SoftRnbdStack;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.testkit.Await;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 20, item 1, as the tester met it: NBD clients use rnbd0 through the gateway (random 4 KiB
 * writes at depth 16, as fio does, or a connection that read once and went idle), and
 * {@code rnbd:unmap rnbd0} without --force must be refused with a line naming them; with
 * --force the clients get NBD_ESHUTDOWN for what they send next, not a dropped connection.
 * Over the real stack: RNBD over RTRS over two soft RDMA devices.
 */
@Timeout(90)
class GatewayUnmapTest {
    private static final long SIZE = 64L << 20;
    private SoftRnbdStack stack;

    @BeforeEach
    void start() throws Exception {
        stack = new SoftRnbdStack(128 * 1024).export("mem0", SIZE);
        stack.map("rnbd0", "mem0");
    }

    @AfterEach
    void stop() throws Exception {
        stack.close();
    }

    @Test
    void unmapIsRefusedWhileNbdClientsUseTheDeviceAndForceGivesThemACleanError() throws Exception {
        try (NbdClient busy = NbdClient.connect(stack.nbdAddress(), "rnbd0")) {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicReference<Throwable> ioError = new AtomicReference<>();
            AtomicInteger done = new AtomicInteger();
            Thread load = randomWrites(busy, stop, ioError, done);
            awaitCount(done, 200);

            BlockIoException refused = assertThrows(BlockIoException.class,
                    () -> stack.rnbdClient.unmap("rnbd0", false));
            assertEquals(Errno.EBUSY, refused.errno());
            assertTrue(refused.getMessage().contains("1 user (nbd 127.0.0.1:"), refused.getMessage());
            assertEquals(1, stack.rnbdClient.devices().get(0).users());

            int before = done.get();
            awaitCount(done, before + 200);
            stop.set(true);
            load.join(30_000);
            assertNull(ioError.get(), "IO of the NBD client after the refused unmap");
        }
        // the connection closed: the claim goes with it (asynchronously, as the server notices the close)
        awaitUsers(0);
        stack.rnbdClient.unmap("rnbd0", false); // nothing holds it now
        stack.map("rnbd0", "mem0");

        try (NbdClient idle = NbdClient.connect(stack.nbdAddress(), "rnbd0");
             NbdClient other = NbdClient.connect(stack.nbdAddress(), "rnbd0")) {
            idle.read(0, ByteBuffer.allocate(4096)).get(10, TimeUnit.SECONDS);
            BlockIoException refused = assertThrows(BlockIoException.class,
                    () -> stack.rnbdClient.unmap("rnbd0", false));
            assertTrue(refused.getMessage().contains("0 requests in flight, 2 users (nbd 127.0.0.1:"),
                    refused.getMessage());
            assertFalse(refused.getMessage().contains("\n"), "one line");

            stack.rnbdClient.unmap("rnbd0", true);
            assertTrue(stack.rnbdClient.devices().isEmpty());
            for (NbdClient c : List.of(idle, other)) {
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> c.write(0, ByteBuffer.allocate(4096), false).get(10, TimeUnit.SECONDS));
                BlockIoException cause = assertInstanceOf(BlockIoException.class, e.getCause());
                assertEquals(Errno.ESHUTDOWN, cause.errno(), "NBD error for a request after the forced unmap: "
                        + cause.getMessage());
                // the connection is still there to say so again, until the client disconnects
                ExecutionException again = assertThrows(ExecutionException.class,
                        () -> c.read(0, ByteBuffer.allocate(4096)).get(10, TimeUnit.SECONDS));
                assertEquals(Errno.ESHUTDOWN, ((BlockIoException) again.getCause()).errno());
            }
        }
        Await.until(() -> stack.nbd.connectionCount() + " connections after the clients disconnected",
                () -> stack.nbd.connectionCount() == 0, Duration.ofSeconds(10));
    }

    /** fio's randwrite at iodepth 16 over 4 KiB blocks, until {@code stop}. */
    private static Thread randomWrites(NbdClient c, AtomicBoolean stop, AtomicReference<Throwable> error,
                                       AtomicInteger done) {
        Thread t = new Thread(() -> {
            Random rnd = new Random(20);
            Semaphore depth = new Semaphore(16);
            List<CompletableFuture<Void>> all = new ArrayList<>();
            try {
                while (!stop.get() && error.get() == null) {
                    depth.acquire();
                    ByteBuffer b = ByteBuffer.allocateDirect(4096);
                    rnd.ints(1024).forEach(b::putInt);
                    long off = (long) rnd.nextInt((int) (SIZE / 4096)) * 4096;
                    all.add(c.write(off, b.flip(), false).whenComplete((v, e) -> {
                        if (e != null) {
                            error.compareAndSet(null, e);
                        }
                        done.incrementAndGet();
                        depth.release();
                    }));
                    if (all.size() > 1024) {
                        all.removeIf(CompletableFuture::isDone);
                    }
                }
                CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                error.compareAndSet(null, e);
            }
        }, "test-randwrite");
        t.start();
        return t;
    }

    private static void awaitCount(AtomicInteger n, int atLeast) {
        Await.until(() -> "only " + n.get() + " writes completed, waiting for " + atLeast,
                () -> n.get() >= atLeast, Duration.ofSeconds(30));
    }

    private void awaitUsers(int users) {
        Await.until(() -> stack.rnbdClient.devices().get(0).users() + " users, waiting for " + users,
                () -> stack.rnbdClient.devices().get(0).users() == users, Duration.ofSeconds(10));
    }
}

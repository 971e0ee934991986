package io.rnbd.nbd.client;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.testkit.ExternalTools;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Our client against nbdkit's memory plugin: the peer used by the benchmark. */
@Timeout(60)
class NbdClientNbdkitTest {
    private static final int SIZE = 32 * 1024 * 1024;
    private Process nbdkit;
    private InetSocketAddress addr;

    @BeforeEach
    void start() throws Exception {
        assumeTrue(ExternalTools.installed("nbdkit"), "nbdkit not installed");
        int port = ExternalTools.freePort();
        nbdkit = new ProcessBuilder("nbdkit", "--exit-with-parent", "-f", "-i", "127.0.0.1", "-p",
                String.valueOf(port), "memory", String.valueOf(SIZE)).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertTrue(ExternalTools.awaitListening(port, Duration.ofSeconds(10), nbdkit), "nbdkit did not start");
        addr = new InetSocketAddress("127.0.0.1", port);
    }

    @AfterEach
    void stop() throws Exception {
        if (nbdkit != null) {
            nbdkit.destroy();
            assertTrue(nbdkit.waitFor(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void verifiedRandomIoAtQueueDepth32() throws Exception {
        try (NbdClient c = NbdClient.connect(addr, "")) {
            assertEquals(SIZE, c.size());
            assertTrue(c.capabilities().write());
            assertTrue(c.capabilities().flush());
            assertTrue(c.capabilities().fua());
            assertTrue(c.capabilities().trim());
            assertTrue(c.capabilities().zero());
            int blocks = SIZE / 4096;
            byte[] shadow = new byte[SIZE];
            Random rnd = new Random(11);
            Semaphore depth = new Semaphore(32);
            List<CompletableFuture<Void>> all = new ArrayList<>();
            // Each block written once per pass: concurrent writes never overlap.
            int[] order = rnd.ints(0, blocks).distinct().limit(2000).toArray();
            for (int block : order) {
                byte[] b = new byte[4096];
                rnd.nextBytes(b);
                System.arraycopy(b, 0, shadow, block * 4096, 4096);
                depth.acquire();
                all.add(c.write(block * 4096L, ByteBuffer.wrap(b), rnd.nextInt(4) == 0)
                        .whenComplete((v, t) -> depth.release()));
            }
            CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
            c.flush().get();
            all.clear();
            for (int i = 0; i < 4000; i++) {
                int off = rnd.nextInt(blocks) * 4096;
                ByteBuffer dst = ByteBuffer.allocateDirect(4096);
                depth.acquire();
                all.add(c.read(off, dst).whenComplete((v, t) -> depth.release()).thenRun(() -> {
                    byte[] got = new byte[4096];
                    dst.get(0, got);
                    assertArrayEquals(Arrays.copyOfRange(shadow, off, off + 4096), got, "block at " + off);
                }));
            }
            CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void trimZeroesAndLargeRequests() throws Exception {
        try (NbdClient c = NbdClient.connect(addr, "")) {
            byte[] big = new byte[4 * 1024 * 1024];
            new Random(5).nextBytes(big);
            c.write(1 << 20, ByteBuffer.wrap(big), true).get();
            ByteBuffer back = ByteBuffer.allocate(big.length);
            c.read(1 << 20, back).get();
            assertArrayEquals(big, back.array());
            c.trim(1 << 20, 1 << 20).get();
            c.writeZeroes(2 << 20, 1 << 20, false).get();
            c.read(1 << 20, back.clear()).get();
            byte[] expect = big.clone();
            Arrays.fill(expect, 0, 2 << 20, (byte) 0);
            assertArrayEquals(expect, back.array());
        }
    }

    /**
     * A server without WRITE_ZEROES (nbdkit's nozero filter stops advertising it): the client
     * writes zeros itself, in pieces of its 1 MiB zero buffer, one after the other; a range of
     * several pieces and a short tail lands exactly where asked.
     */
    @Test
    void writeZeroesWithoutTheServersZeroingWritesZerosInPieces() throws Exception {
        int port = ExternalTools.freePort();
        Process nozero = new ProcessBuilder("nbdkit", "--exit-with-parent", "-f", "-i", "127.0.0.1", "-p",
                String.valueOf(port), "--filter=nozero", "memory", String.valueOf(SIZE)).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            assertTrue(ExternalTools.awaitListening(port, Duration.ofSeconds(10), nozero), "nbdkit did not start");
            try (NbdClient c = NbdClient.connect(new InetSocketAddress("127.0.0.1", port), "")) {
                assertFalse(c.capabilities().zero(), "the filter hides WRITE_ZEROES");
                byte[] data = new byte[5 << 20];
                new Random(9).nextBytes(data);
                c.write(0, ByteBuffer.wrap(data), false).get();
                int from = (1 << 20) - 4096;
                int len = (2 << 20) + 8192 + 512; // two full pieces, a bit before and a short tail
                c.writeZeroes(from, len, false).get();
                ByteBuffer back = ByteBuffer.allocate(data.length);
                c.read(0, back).get();
                byte[] expect = data.clone();
                Arrays.fill(expect, from, from + len, (byte) 0);
                assertArrayEquals(expect, back.array());
            }
        } finally {
            nozero.destroy();
            assertTrue(nozero.waitFor(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void outOfRangeFailsLocallyAndTheConnectionStaysUsable() throws Exception {
        try (NbdClient c = NbdClient.connect(addr, "")) {
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> c.read(SIZE, ByteBuffer.allocate(512)).get());
            assertEquals(Errno.EINVAL, ((BlockIoException) e.getCause()).errno());
            c.read(0, ByteBuffer.allocate(512)).get(5, TimeUnit.SECONDS);
            assertEquals(0, c.inflight());
        }
    }
}

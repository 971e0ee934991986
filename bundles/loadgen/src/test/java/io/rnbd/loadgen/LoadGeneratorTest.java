package io.rnbd.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockRequests;
import io.rnbd.rnbd.api.Capabilities;
import io.rnbd.testkit.FakeScheduler;
import io.rnbd.testkit.block.ForwardingBlockDevice;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LoadGeneratorTest {
    private final List<BlockDevice> devices = new ArrayList<>();

    @AfterEach
    void close() {
        devices.forEach(BlockDevice::close);
    }

    private <T extends BlockDevice> T keep(T dev) {
        devices.add(dev);
        return dev;
    }

    /** A fresh memory-backend device, found and checked as LoadGenMain finds and checks it. */
    static BlockDevice memory(String size) {
        for (BlockBackend b : ServiceLoader.load(BlockBackend.class)) {
            if (b.type().equals("memory")) {
                try {
                    return BlockRequests.checked(b.open(Map.of("size", size), false));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        throw new IllegalStateException("memory backend not on the test class path");
    }

    private static LoadSpec.Builder mixedVerified() {
        return LoadSpec.builder().workload("randrw").mixRead(50).blockSize(4096).queueDepth(32)
                .duration(Duration.ZERO).ioCount(40_000).verify(true);
    }

    private static LoadResult run(BlockDevice dev, LoadSpec spec) throws Exception {
        return new LoadGenerator(dev, spec).start(null).get(60, TimeUnit.SECONDS);
    }

    @Test
    void verifiedMixedRandomIoAtDepth32FindsNoMismatchInline() throws Exception {
        BlockDevice dev = keep(memory("2m"));
        LoadResult r = run(dev, mixedVerified().build());
        assertEquals(40_000, r.counters().ios());
        assertEquals(0, r.counters().errors(), r.problems().toString());
        assertEquals(0, r.counters().mismatches(), r.problems().toString());
        assertTrue(r.counters().verified() > 10_000, "reads of written blocks were checked: " + r.counters());
        assertEquals("io count", r.stoppedBy());
    }

    @Test
    void verifiedMixedRandomIoAtDepth32FindsNoMismatchWithAsyncCompletions() throws Exception {
        AsyncDevice dev = keep(new AsyncDevice(memory("2m")));
        LoadResult r = run(dev, mixedVerified().ioCount(20_000).build());
        assertEquals(20_000, r.counters().ios());
        assertEquals(0, r.counters().mismatches(), r.problems().toString());
        assertTrue(r.counters().verified() > 5_000);
        assertTrue(dev.maxInFlight.get() <= 32, "never more than the queue depth: " + dev.maxInFlight);
    }

    /** Counts the IOs submitted under each plug; every plug must be closed by its taker before the next. */
    private static final class PlugCounting extends AsyncDevice {
        final List<Integer> perPlug = new ArrayList<>();
        int current = -1;
        int unplugged;

        PlugCounting(BlockDevice next) {
            super(next);
        }

        @Override
        public synchronized io.rnbd.rnbd.api.BlockPlug plug() {
            assertEquals(-1, current, "a plug was taken inside another");
            current = 0;
            return () -> {
                synchronized (this) {
                    perPlug.add(current);
                    current = -1;
                }
            };
        }

        private synchronized void count() {
            if (current >= 0) {
                current++;
            } else {
                unplugged++;
            }
        }

        @Override
        public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
            count();
            return super.read(offset, dst);
        }

        @Override
        public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
            count();
            return super.write(offset, src, fua);
        }
    }

    @Test
    void readyIosGoOutUnderOnePlugUpToTheBatch() throws Exception {
        PlugCounting dev = keep(new PlugCounting(memory("2m")));
        LoadResult r = run(dev, mixedVerified().ioCount(20_000).batch(4).build());
        assertEquals(0, r.counters().mismatches(), r.problems().toString());
        synchronized (dev) {
            // slots drained after the IO count was reached issue nothing, so the last plugs may hold fewer
            assertTrue(dev.perPlug.stream().allMatch(n -> n <= 4), "at most 4 IOs per plug");
            assertTrue(dev.perPlug.stream().filter(n -> n >= 2).count() > 10,
                    "completions on three threads leave several slots ready at times");
            int plugged = dev.perPlug.stream().mapToInt(Integer::intValue).sum();
            assertEquals(20_000, plugged + dev.unplugged, "every IO submitted once, plugged or alone");
        }
    }

    @Test
    void batchOneNeverPlugs() throws Exception {
        PlugCounting dev = keep(new PlugCounting(memory("2m")));
        LoadResult r = run(dev, mixedVerified().ioCount(5_000).batch(1).build());
        assertEquals(5_000, r.counters().ios());
        synchronized (dev) {
            assertEquals(List.of(), dev.perPlug);
            assertEquals(5_000, dev.unplugged);
        }
        assertEquals("batch 0 must be 1-1024", assertThrows(IllegalArgumentException.class,
                () -> LoadSpec.builder().batch(0).build()).getMessage());
    }

    @Test
    void aDeviceFlippingAByteIsCaught() throws Exception {
        AtomicInteger reads = new AtomicInteger();
        BlockDevice corrupting = keep(new ForwardingBlockDevice(memory("2m")) {
            @Override
            public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
                return next.read(offset, dst).thenRun(() -> {
                    if (reads.incrementAndGet() % 97 == 0) {
                        int at = dst.position() + 1000;
                        dst.put(at, (byte) (dst.get(at) ^ 0x10));
                    }
                });
            }
        });
        LoadResult r = run(corrupting, mixedVerified().build());
        assertTrue(r.counters().mismatches() > 10, "mismatches: " + r.counters());
        assertEquals(0, r.counters().errors());
        assertTrue(r.problems().get(0).contains("checksum mismatch"), r.problems().get(0));
    }

    @Test
    void aDeviceLosingWritesIsCaught() throws Exception {
        AtomicInteger writes = new AtomicInteger();
        BlockDevice losing = keep(new ForwardingBlockDevice(memory("2m")) {
            @Override
            public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
                return writes.incrementAndGet() % 50 == 0 ? CompletableFuture.completedFuture(null)
                        : next.write(offset, src, fua);
            }
        });
        LoadResult r = run(losing, mixedVerified().build());
        assertTrue(r.counters().mismatches() > 10, "mismatches: " + r.counters());
        assertTrue(r.problems().stream().anyMatch(p -> p.contains("lost or stale write") || p.contains("no pattern header")),
                r.problems().toString());
    }

    @Test
    void aDurationEndsTheRun() throws Exception {
        BlockDevice dev = keep(new AsyncDevice(memory("64m")));
        LoadSpec spec = LoadSpec.builder().workload("randread").queueDepth(4).duration(Duration.ofMillis(300)).build();
        LoadResult r = run(dev, spec);
        assertEquals("duration", r.stoppedBy());
        assertTrue(r.seconds() >= 0.3 && r.seconds() < 5, "took " + r.seconds());
        assertTrue(r.counters().reads() > 0);
        assertEquals(0, r.counters().writes());
    }

    @Test
    void sequentialWritesCoverTheRangeInOrder() throws Exception {
        List<Long> offsets = new ArrayList<>();
        BlockDevice recording = keep(new ForwardingBlockDevice(memory("1m")) {
            @Override
            public synchronized CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
                offsets.add(offset);
                return next.write(offset, src, fua);
            }
        });
        LoadSpec spec = LoadSpec.builder().workload("write").blockSize(8192).queueDepth(1).duration(Duration.ZERO)
                .ioCount(10).range(65536, 32768).build();
        LoadResult r = run(recording, spec);
        assertEquals(List.of(65536L, 73728L, 81920L, 90112L, 65536L, 73728L, 81920L, 90112L, 65536L, 73728L), offsets);
        assertEquals(10 * 8192, r.counters().writeBytes());
    }

    @Test
    void theQueueDepthIsReallyKeptInFlight() throws Exception {
        // completes nothing until 32 IOs wait: a run at depth < 32 would hang here
        List<CompletableFuture<Void>> held = new ArrayList<>();
        BlockDevice gate = keep(new ForwardingBlockDevice(memory("1m")) {
            @Override
            public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
                CompletableFuture<Void> f = new CompletableFuture<>();
                List<CompletableFuture<Void>> release = List.of();
                synchronized (held) {
                    if (held.size() < 32) {
                        held.add(f);
                        if (held.size() == 32) {
                            release = new ArrayList<>(held);
                        }
                    } else {
                        return next.read(offset, dst);
                    }
                }
                release.forEach(x -> x.complete(null));
                return f;
            }
        });
        LoadSpec spec = LoadSpec.builder().queueDepth(32).duration(Duration.ZERO).ioCount(100).build();
        assertEquals(100, run(gate, spec).counters().reads());
    }

    @Test
    void failingIoIsCountedAndStopsTheRunAtMaxErrors() throws Exception {
        BlockDevice failing = keep(new ForwardingBlockDevice(memory("1m")) {
            @Override
            public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
                return CompletableFuture.failedFuture(new BlockIoException(Errno.EIO, "media error"));
            }
        });
        LoadSpec spec = LoadSpec.builder().workload("randwrite").queueDepth(8).duration(Duration.ofSeconds(30))
                .maxErrors(20).build();
        LoadResult r = run(failing, spec);
        assertEquals("errors", r.stoppedBy());
        assertTrue(r.counters().errors() >= 20 && r.counters().errors() < 20 + 8, "errors " + r.counters().errors());
        assertTrue(r.problems().get(0).startsWith("write at "), r.problems().get(0));
        assertTrue(r.problems().get(0).endsWith("EIO: media error"), r.problems().get(0));
    }

    @Test
    void stopEndsARunEarly() throws Exception {
        BlockDevice dev = keep(new AsyncDevice(memory("1m")));
        LoadGenerator gen = new LoadGenerator(dev, LoadSpec.builder().duration(Duration.ofHours(1)).build());
        CompletableFuture<LoadResult> done = gen.start(null);
        assertFalse(done.isDone());
        gen.stop();
        assertEquals("stopped", done.get(30, TimeUnit.SECONDS).stoppedBy());
    }

    @Test
    void progressComesOncePerSecondOfTheGivenClock() throws Exception {
        FakeScheduler timer = new FakeScheduler();
        List<CompletableFuture<Void>> held = new ArrayList<>();
        CountDownLatch parkedAll = new CountDownLatch(4);
        BlockDevice parked = keep(new ForwardingBlockDevice(memory("1m")) {
            @Override
            public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
                CompletableFuture<Void> f = new CompletableFuture<>();
                synchronized (held) {
                    if (held.size() < 4) {
                        held.add(f);
                        parkedAll.countDown();
                        return f;
                    }
                }
                return next.read(offset, dst);
            }
        });
        LoadGenerator gen = new LoadGenerator(parked, LoadSpec.builder().queueDepth(4).duration(Duration.ZERO)
                .ioCount(10).build(), timer, timer.nanoSource());
        List<LoadProgress> seen = new ArrayList<>();
        CompletableFuture<LoadResult> done = gen.start(seen::add);
        assertTrue(parkedAll.await(30, TimeUnit.SECONDS));
        timer.advance(Duration.ofMillis(999));
        assertEquals(0, seen.size());
        timer.advance(Duration.ofMillis(1));
        assertEquals(1, seen.size());
        assertEquals(1_000_000_000L, seen.get(0).elapsedNanos());
        synchronized (held) {
            held.forEach(f -> f.complete(null));
        }
        LoadResult r = done.get(30, TimeUnit.SECONDS);
        assertEquals(10, r.counters().reads());
        assertEquals(0, timer.pending(), "the progress task is cancelled at the end");
    }

    @Test
    void specsThatDoNotFitTheDeviceAreRefused() {
        BlockDevice dev = keep(memory("1m"));
        assertRefused("block size 1000 is not a multiple of the device's 512-byte logical block", dev,
                LoadSpec.builder().blockSize(1000).build());
        assertRefused("block size 1m exceeds the device's max IO 128k", dev,
                LoadSpec.builder().blockSize(1 << 20).build());
        assertRefused("verify needs more blocks (8) than the queue depth (32)", dev,
                LoadSpec.builder().workload("randrw").blockSize(128 << 10).verify(true).build());
        assertRefused("verify needs writes: use randrw, rw or a write workload", dev,
                LoadSpec.builder().verify(true).build());
        assertRefused("range 0+2097152 is beyond the device's 1048576 bytes", dev,
                LoadSpec.builder().range(0, 2 << 20).build());
        BlockDevice ro = keep(new ForwardingBlockDevice(memory("1m")) {
            @Override
            public Capabilities capabilities() {
                return Capabilities.READ_ONLY;
            }
        });
        assertRefused("the device is read-only: use a read-only workload (randread, read)", ro,
                LoadSpec.builder().workload("randwrite").build());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LoadSpec.builder().workload("randomread"));
        assertEquals("unknown workload randomread (randread, randwrite, randrw, read, write, rw)", e.getMessage());
    }

    private static void assertRefused(String message, BlockDevice dev, LoadSpec spec) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new LoadGenerator(dev, spec));
        assertEquals(message, e.getMessage());
    }
}

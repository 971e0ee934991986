package io.rnbd.itests.rbd;

import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;

/**
 * Verified IO in the manner of fio's {@code verify=crc32c}, for the takeover tests: {@code depth}
 * requests in flight at all times, each a random read or write of 4 KiB to 128 KiB (4 KiB
 * steps) at a random 4 KiB-aligned place of a region; every 4 KiB block a write puts there
 * carries a header (magic, its block number, a generation, the CRC32C of the rest) and filler
 * derived from the two. No two requests in flight overlap, so what every block must hold is
 * known exactly: every read is checked block by block against the last acknowledged write (or
 * zeros), and {@link #verifyAll} reads the whole region back at the end (every acknowledged
 * write readable afterwards). A stale write that lands after a newer acknowledged one shows as
 * a block with an older generation.
 *
 * <p>Stalls: {@link #markFault()} starts a window; {@link #longestSinceMarkMs()} is the longest
 * latency of a request that completed since (one waiting through a takeover from before the
 * fault counts whole), which is what fio reports as the maximum completion latency.
 */
final class HaVerifier implements AutoCloseable {
    static final int BLOCK = 4096;
    private static final int MAX_BLOCKS = 32; // 128 KiB
    private static final long MAGIC = 0x52_4e_42_44_48_41_56_31L; // "RNBDHAV1"
    /** magic, block number, generation (8 bytes each), CRC32C of the filler (4), 4 zero bytes. */
    private static final int HEADER = 32;

    private final BlockDevice dev;
    private final long base;
    private final int blocks;
    private final int depth;
    private final long[] generation; // per block: last acknowledged write's generation, 0 = zeros, -1 = unknown
    private final boolean[] busy;
    private final AtomicLong nextGeneration = new AtomicLong();
    private final AtomicLong reads = new AtomicLong();
    private final AtomicLong writes = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong mismatches = new AtomicLong();
    private final AtomicLong longestNanos = new AtomicLong();
    private final AtomicLong completions = new AtomicLong();
    private final AtomicReference<String> firstProblem = new AtomicReference<>();
    private final List<Thread> lanes = new ArrayList<>();
    private volatile boolean running;

    /**
     * @param base   byte offset of the region (4 KiB aligned)
     * @param length its size in bytes
     */
    HaVerifier(BlockDevice dev, long base, long length, int depth) {
        this.dev = dev;
        this.base = base;
        this.blocks = (int) (length / BLOCK);
        this.depth = depth;
        this.generation = new long[blocks];
        this.busy = new boolean[blocks];
    }

    void start(long seed) {
        running = true;
        SplittableRandom seeds = new SplittableRandom(seed);
        for (int i = 0; i < depth; i++) {
            SplittableRandom rnd = seeds.split();
            Thread t = new Thread(() -> lane(rnd), "ha-verifier-" + i);
            t.setDaemon(true);
            lanes.add(t);
            t.start();
        }
    }

    /** One request in flight at a time per lane, so {@code depth} lanes keep {@code depth} in flight. */
    private void lane(SplittableRandom rnd) {
        try {
            laneLoop(rnd);
        } catch (RuntimeException | Error e) {
            failed.incrementAndGet();
            problem("lane " + Thread.currentThread().getName() + " died: " + e);
        }
    }

    private void laneLoop(SplittableRandom rnd) {
        ByteBuffer buf = ByteBuffer.allocateDirect(MAX_BLOCKS * BLOCK);
        while (running) {
            int n = 1 + rnd.nextInt(MAX_BLOCKS);
            int first = claim(rnd, n);
            boolean write = rnd.nextBoolean();
            long[] gens = new long[n];
            ByteBuffer b = buf.clear().limit(n * BLOCK);
            if (write) {
                for (int i = 0; i < n; i++) {
                    gens[i] = nextGeneration.incrementAndGet();
                    fill(b, i * BLOCK, first + i, gens[i]);
                }
            } else {
                synchronized (this) {
                    for (int i = 0; i < n; i++) {
                        gens[i] = generation[first + i];
                    }
                }
            }
            long t0 = System.nanoTime();
            int errno = 0;
            try {
                CompletableFuture<Void> f = write ? dev.write(base + (long) first * BLOCK, b, false)
                        : dev.read(base + (long) first * BLOCK, b);
                f.get(120, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                errno = BlockIoException.errnoOf(e.getCause());
            } catch (Exception e) {
                errno = -1;
            }
            long latency = System.nanoTime() - t0;
            longestNanos.accumulateAndGet(latency, Math::max);
            completions.incrementAndGet();
            if (errno != 0) {
                failed.incrementAndGet();
                problem((write ? "write" : "read") + " of blocks " + first + "+" + n + " failed: errno " + errno);
                release(first, n, write ? -1 : Long.MIN_VALUE);
                continue;
            }
            if (write) {
                writes.incrementAndGet();
                synchronized (this) {
                    for (int i = 0; i < n; i++) {
                        generation[first + i] = gens[i];
                    }
                }
            } else {
                reads.incrementAndGet();
                for (int i = 0; i < n; i++) {
                    String bad = check(b, i * BLOCK, first + i, gens[i]);
                    if (bad != null) {
                        mismatches.incrementAndGet();
                        problem(bad);
                    }
                }
            }
            release(first, n, Long.MIN_VALUE);
        }
    }

    /** Take {@code n} free blocks in a row; while none are, wait for a lane to release some. */
    private synchronized int claim(SplittableRandom rnd, int n) {
        while (true) {
            for (int attempt = 0; attempt < 64; attempt++) {
                int first = rnd.nextInt(blocks - n + 1);
                boolean free = true;
                for (int i = 0; i < n && free; i++) {
                    free = !busy[first + i];
                }
                if (free) {
                    for (int i = 0; i < n; i++) {
                        busy[first + i] = true;
                    }
                    return first;
                }
            }
            try {
                wait(5); // release() wakes it
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    /** @param mark -1: their content is unknown now (a failed write); Long.MIN_VALUE: as it was */
    private synchronized void release(int first, int n, long mark) {
        for (int i = 0; i < n; i++) {
            busy[first + i] = false;
            if (mark != Long.MIN_VALUE) {
                generation[first + i] = mark;
            }
        }
        notifyAll();
    }

    private void problem(String s) {
        firstProblem.compareAndSet(null, s);
    }

    private static void fill(ByteBuffer b, int at, long block, long gen) {
        ByteBuffer v = b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        SplittableRandom r = new SplittableRandom(block * 0x9E3779B97F4A7C15L ^ gen);
        for (int i = HEADER; i < BLOCK; i += 8) {
            v.putLong(at + i, r.nextLong());
        }
        v.putLong(at, MAGIC);
        v.putLong(at + 8, block);
        v.putLong(at + 16, gen);
        CRC32C crc = new CRC32C();
        crc.update(v.duplicate().position(at + HEADER).limit(at + BLOCK));
        v.putInt(at + 24, (int) crc.getValue());
    }

    /** Null if block {@code block} at {@code at} is what generation {@code gen} wrote (0: zeros; -1: anything). */
    private String check(ByteBuffer b, int at, long block, long gen) {
        if (gen < 0) {
            return null;
        }
        ByteBuffer v = b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if (gen == 0) {
            for (int i = 0; i < BLOCK; i += 8) {
                if (v.getLong(at + i) != 0) {
                    return "block " + block + " should be zeros (never written), holds generation " + v.getLong(at + 16);
                }
            }
            return null;
        }
        long magic = v.getLong(at);
        long blk = v.getLong(at + 8);
        long g = v.getLong(at + 16);
        CRC32C crc = new CRC32C();
        crc.update(v.duplicate().position(at + HEADER).limit(at + BLOCK));
        if (magic != MAGIC || blk != block) {
            return "block " + block + ": no header of it (magic " + Long.toHexString(magic) + ", block " + blk + ")";
        }
        if ((int) crc.getValue() != v.getInt(at + 24)) {
            return "block " + block + ": crc32c mismatch (generation " + g + ")";
        }
        if (g != gen) {
            return "block " + block + ": generation " + g + " where the last acknowledged write was " + gen
                    + (g < gen ? " (an older write landed over a newer one)" : "");
        }
        return null;
    }

    /** Starts a stall window: the longest latency counts from the requests completing after this. */
    void markFault() {
        longestNanos.set(0);
    }

    long longestSinceMarkMs() {
        return TimeUnit.NANOSECONDS.toMillis(longestNanos.get());
    }

    long completions() {
        return completions.get();
    }

    /** Waits until {@code more} further requests completed; false if they did not within {@code timeoutMs}. */
    boolean progresses(int more, long timeoutMs) throws InterruptedException {
        long target = completions.get() + more;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (completions.get() < target) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(20); // the lanes' completions are the event; nothing to block on
        }
        return true;
    }

    void stop() throws InterruptedException {
        running = false;
        for (Thread t : lanes) {
            t.join(TimeUnit.MINUTES.toMillis(3));
        }
    }

    /** Reads the whole region and checks every block: what a stall's end leaves must be the last acknowledged. */
    long verifyAll() throws Exception {
        ByteBuffer b = ByteBuffer.allocateDirect(MAX_BLOCKS * BLOCK);
        long bad = 0;
        for (int first = 0; first < blocks; first += MAX_BLOCKS) {
            int n = Math.min(MAX_BLOCKS, blocks - first);
            b.clear().limit(n * BLOCK);
            dev.read(base + (long) first * BLOCK, b).get(120, TimeUnit.SECONDS);
            for (int i = 0; i < n; i++) {
                long g;
                synchronized (this) {
                    g = generation[first + i];
                }
                String problem = check(b, i * BLOCK, first + i, g);
                if (problem != null) {
                    bad++;
                    problem("final read-back: " + problem);
                }
            }
        }
        mismatches.addAndGet(bad);
        return bad;
    }

    long reads() {
        return reads.get();
    }

    long writes() {
        return writes.get();
    }

    long failed() {
        return failed.get();
    }

    long mismatches() {
        return mismatches.get();
    }

    String firstProblem() {
        return firstProblem.get();
    }

    String summary() {
        return writes.get() + " writes, " + reads.get() + " reads verified, " + failed.get() + " failed, "
                + mismatches.get() + " verify errors" + (firstProblem.get() == null ? "" : "; first: "
                + firstProblem.get());
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}

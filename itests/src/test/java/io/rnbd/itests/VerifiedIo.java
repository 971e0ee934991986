package io.rnbd.itests;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.rnbd.rnbd.api.BlockDevice;

/**
 * Continuous verified IO on a block device, the way the scenario tests need it: a few lanes
 * (threads), each owning its own blocks (block % lanes == lane) and doing one request at a
 * time, so that what a block must contain is always known exactly. A write puts a pattern
 * derived from (block, generation); a successful write records the generation; a read of a
 * recorded block is compared. A failed write makes its block unknown (it may have landed
 * partly). {@link #forget()} starts a new epoch: what was recorded is dropped and requests
 * issued before it are neither recorded nor verified (for a backend that loses its data).
 */
final class VerifiedIo implements AutoCloseable {

    /** A request that takes longer than this counts as failed (the test then fails anyway). */
    static final long OP_TIMEOUT_MS = 90_000;

    private final BlockDevice device;
    private final long offset;
    private final int blockSize;
    private final int blocks;
    private final int lanes;
    private final Thread[] threads;
    private final ConcurrentHashMap<Integer, Long> written = new ConcurrentHashMap<>();
    private final AtomicLong generation = new AtomicLong();
    private final AtomicInteger epoch = new AtomicInteger();
    private final AtomicLong writes = new AtomicLong();
    private final AtomicLong reads = new AtomicLong();
    private final AtomicLong verifiedReads = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong mismatches = new AtomicLong();
    private final AtomicInteger busy = new AtomicInteger();
    private final AtomicReference<String> firstProblem = new AtomicReference<>();
    private volatile boolean running;

    /**
     * @param blocks    how many blocks of {@code blockSize} from {@code offset} to use
     * @param lanes     requests kept in flight
     */
    VerifiedIo(BlockDevice device, long offset, int blockSize, int blocks, int lanes) {
        this.device = device;
        this.offset = offset;
        this.blockSize = blockSize;
        this.blocks = blocks;
        this.lanes = lanes;
        this.threads = new Thread[lanes];
        if (offset + (long) blockSize * blocks > device.size()) {
            throw new IllegalArgumentException("range beyond the device's " + device.size() + " bytes");
        }
    }

    VerifiedIo start() {
        running = true;
        for (int lane = 0; lane < lanes; lane++) {
            int l = lane;
            threads[lane] = new Thread(() -> runLane(l), "itest-verified-io-" + lane);
            threads[lane].setDaemon(true);
            threads[lane].start();
        }
        return this;
    }

    private void runLane(int lane) {
        Random random = new Random(31L * lane + 7);
        int owned = (blocks - lane + lanes - 1) / lanes;
        while (running) {
            int block = lane + lanes * random.nextInt(owned);
            busy.incrementAndGet();
            try {
                if (random.nextBoolean() || !written.containsKey(block)) {
                    write(block);
                } else {
                    read(block);
                }
            } finally {
                busy.decrementAndGet();
            }
        }
    }

    private void write(int block) {
        int startEpoch = epoch.get();
        long gen = generation.incrementAndGet();
        ByteBuffer data = pattern(block, gen);
        try {
            device.write(offset + (long) block * blockSize, data, false).get(OP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            writes.incrementAndGet();
            if (epoch.get() == startEpoch) {
                written.put(block, gen);
            } else {
                written.remove(block);
            }
        } catch (Exception e) {
            written.remove(block);
            failed("write of block " + block, e);
        }
    }

    private void read(int block) {
        int startEpoch = epoch.get();
        Long expected = written.get(block);
        ByteBuffer data = ByteBuffer.allocate(blockSize);
        try {
            device.read(offset + (long) block * blockSize, data).get(OP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            reads.incrementAndGet();
            if (expected != null && epoch.get() == startEpoch) {
                compare(block, expected, data);
            }
        } catch (Exception e) {
            failed("read of block " + block, e);
        }
    }

    private void compare(int block, long gen, ByteBuffer data) {
        verifiedReads.incrementAndGet();
        data.rewind();
        ByteBuffer want = pattern(block, gen);
        if (!want.equals(data)) {
            mismatches.incrementAndGet();
            firstProblem.compareAndSet(null, "block " + block + " does not hold generation " + gen
                    + " (first long read " + Long.toHexString(data.getLong(0)) + ", expected "
                    + Long.toHexString(want.getLong(0)) + ")");
        }
    }

    private void failed(String what, Exception e) {
        failures.incrementAndGet();
        Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
        String why = e instanceof TimeoutException ? "no completion within " + OP_TIMEOUT_MS + " ms" : cause.toString();
        firstProblem.compareAndSet(null, what + " failed: " + why);
    }

    /** Every long of the block says which block and generation it belongs to. */
    private ByteBuffer pattern(int block, long gen) {
        ByteBuffer b = ByteBuffer.allocate(blockSize);
        long seed = (gen << 20) ^ block;
        for (int i = 0; i < blockSize / 8; i++) {
            b.putLong(seed * 0x9E3779B97F4A7C15L + i);
        }
        b.flip();
        return b;
    }

    /** Drop what is known: requests issued before this are neither recorded nor verified. */
    void forget() {
        epoch.incrementAndGet();
        written.clear();
    }

    long completed() {
        return writes.get() + reads.get() + failures.get();
    }

    /** Requests in progress right now (waiting counts). */
    int busy() {
        return busy.get();
    }

    /** Waits until {@code n} more requests completed (successfully or not); fails on timeout. */
    void awaitProgress(long n, long timeoutMs) throws InterruptedException {
        long target = completed() + n;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (completed() < target) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("verified IO made no progress: " + (target - completed())
                        + " of " + n + " requests still missing after " + timeoutMs + " ms; " + summary());
            }
            Thread.sleep(20); // polling a counter: there is no event to wait on
        }
    }

    /**
     * Waits until no request completed for {@code quietMs} (IO is stalled); fails if IO keeps
     * completing for {@code timeoutMs}.
     */
    void awaitQuiet(long quietMs, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        long last = completed();
        long since = System.nanoTime();
        while (System.nanoTime() - since < TimeUnit.MILLISECONDS.toNanos(quietMs)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("IO did not stall within " + timeoutMs + " ms; " + summary());
            }
            Thread.sleep(20); // polling a counter: there is no event to wait on
            long now = completed();
            if (now != last) {
                last = now;
                since = System.nanoTime();
            }
        }
    }

    /** Stops the lanes after their current request; fails if one does not finish in time. */
    void stop() throws InterruptedException {
        running = false;
        for (Thread t : threads) {
            if (t != null) {
                t.join(OP_TIMEOUT_MS + 10_000);
                if (t.isAlive()) {
                    throw new AssertionError(t.getName() + " still stuck in a request; " + summary());
                }
            }
        }
    }

    /** Reads every recorded block back (after {@link #stop()}) and compares it. */
    void verifyAll() {
        List<Integer> recorded = new ArrayList<>(written.keySet());
        for (int block : recorded) {
            read(block);
        }
    }

    int recordedBlocks() {
        return written.size();
    }

    long failures() {
        return failures.get();
    }

    long mismatches() {
        return mismatches.get();
    }

    long verifiedReads() {
        return verifiedReads.get();
    }

    long writes() {
        return writes.get();
    }

    String summary() {
        String problem = firstProblem.get();
        return "writes " + writes + ", reads " + reads + ", verified " + verifiedReads + ", failed " + failures
                + ", mismatches " + mismatches + (problem == null ? "" : ", first problem: " + problem);
    }

    /** Zero failed requests and zero mismatches, or an assertion naming the first problem. */
    void assertClean(String what) {
        if (failures.get() != 0 || mismatches.get() != 0) {
            throw new AssertionError(what + ": " + summary());
        }
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}

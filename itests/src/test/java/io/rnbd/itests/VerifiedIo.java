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
import java.util.function.Supplier;

import io.rnbd.rnbd.api.BlockDevice;

/**
 * Continuous verified IO on a block device, the way the scenario tests need it: a few lanes
 * (threads), each owning its own blocks (block % lanes == lane) and doing one request at a
 * time, so that what a block must contain is always known exactly. A write puts a pattern
 * derived from (block, generation); a successful write records the generation; a read of a
 * recorded block is compared. A failed write makes its block unknown (it may have landed
 * partly). The device may be given as a supplier, asked before every request, for a test that replaces
 * the device under the lanes (the client bundle restarted). The longest request latency since
 * the last {@link #takeLongestStallMs()} is kept: it is the stall a swap caused.
 */
final class VerifiedIo implements AutoCloseable {

    /** A request that takes longer than this counts as failed (the test then fails anyway). */
    static final long OP_TIMEOUT_MS = 90_000;

    private final Supplier<BlockDevice> device;
    private final long offset;
    private final int blockSize;
    private final int blocks;
    private final int lanes;
    private final Thread[] threads;
    private final ConcurrentHashMap<Integer, Long> written = new ConcurrentHashMap<>();
    private final AtomicLong generation = new AtomicLong();
    private final AtomicLong writes = new AtomicLong();
    private final AtomicLong reads = new AtomicLong();
    private final AtomicLong verifiedReads = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong mismatches = new AtomicLong();
    private final AtomicInteger busy = new AtomicInteger();
    private final AtomicReference<String> firstProblem = new AtomicReference<>();
    private final AtomicLong longestNanos = new AtomicLong();
    private final AtomicLong firstFailure = new AtomicLong();
    private final AtomicLong lastFailure = new AtomicLong();
    private final AtomicReference<String> longestWhat = new AtomicReference<>("");
    private volatile boolean running;
    private volatile boolean paused;

    /**
     * @param blocks    how many blocks of {@code blockSize} from {@code offset} to use
     * @param lanes     requests kept in flight
     */
    VerifiedIo(BlockDevice device, long offset, int blockSize, int blocks, int lanes) {
        this(() -> device, device.size(), offset, blockSize, blocks, lanes);
    }

    /**
     * @param device     asked for the device before every request (it may block until one is there)
     * @param deviceSize the device's size, to check the range against
     */
    VerifiedIo(Supplier<BlockDevice> device, long deviceSize, long offset, int blockSize, int blocks, int lanes) {
        this.device = device;
        this.offset = offset;
        this.blockSize = blockSize;
        this.blocks = blocks;
        this.lanes = lanes;
        this.threads = new Thread[lanes];
        if (offset + (long) blockSize * blocks > deviceSize) {
            throw new IllegalArgumentException("range beyond the device's " + deviceSize + " bytes");
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
            // busy before paused is read: pauseAndVerifyAll sets paused before it reads busy,
            // so either it sees this lane busy and waits, or the lane sees paused and idles
            busy.incrementAndGet();
            if (paused) {
                busy.decrementAndGet();
                idle();
                continue;
            }
            int block = lane + lanes * random.nextInt(owned);
            try {
                long failedBefore = failures.get();
                if (random.nextBoolean() || !written.containsKey(block)) {
                    write(block);
                } else {
                    read(block);
                }
                if (failures.get() != failedBefore) {
                    // as an application would before retrying: a device failing every request at
                    // once would otherwise spin the lanes (and the CPU the swap needs)
                    idle();
                }
            } finally {
                busy.decrementAndGet();
            }
        }
    }

    private void write(int block) {
        long gen = generation.incrementAndGet();
        ByteBuffer data = pattern(block, gen);
        long start = System.nanoTime();
        try {
            device.get().write(offset + (long) block * blockSize, data, false).get(OP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            took(start, "write", block);
            writes.incrementAndGet();
            written.put(block, gen);
        } catch (Exception e) {
            took(start, "failed write", block);
            written.remove(block);
            failed("write of block " + block, e);
        }
    }

    private void read(int block) {
        Long expected = written.get(block);
        ByteBuffer data = ByteBuffer.allocate(blockSize);
        long start = System.nanoTime();
        try {
            device.get().read(offset + (long) block * blockSize, data).get(OP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            took(start, "read", block);
            reads.incrementAndGet();
            if (expected != null) {
                compare(block, expected, data);
            }
        } catch (Exception e) {
            took(start, "failed read", block);
            failed("read of block " + block, e);
        }
    }

    private void took(long startNanos, String what, int block) {
        long nanos = System.nanoTime() - startNanos;
        long was = longestNanos.get();
        while (nanos > was) {
            if (longestNanos.compareAndSet(was, nanos)) {
                longestWhat.set(what + " of block " + block);
                return;
            }
            was = longestNanos.get();
        }
    }

    /**
     * The longest any request took (waiting for a device included) since the last call, in
     * milliseconds, and starts measuring anew: a swap's stall as the application saw it.
     */
    long takeLongestStallMs() {
        return TimeUnit.NANOSECONDS.toMillis(longestNanos.getAndSet(0));
    }

    /**
     * From the first to the last failed request since the last call, in milliseconds (0: none
     * or one), and starts anew: how long the application saw errors.
     */
    long takeFailureWindowMs() {
        long first = firstFailure.getAndSet(0);
        long last = lastFailure.getAndSet(0);
        return first == 0 ? 0 : TimeUnit.NANOSECONDS.toMillis(Math.max(0, last - first));
    }

    /** Which request took longest (for messages). */
    String longestWhat() {
        return longestWhat.get();
    }

    private void idle() {
        try {
            Thread.sleep(5); // idling (paused, or after a failure); no event to wait on
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
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
        long now = System.nanoTime();
        firstFailure.compareAndSet(0, now);
        lastFailure.set(now);
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

    /**
     * While the lanes keep running: lets every lane finish its request and idle, reads every
     * recorded block back and compares it, then lets the lanes go on. Every block acknowledged
     * so far is checked, not just the ones the lanes happen to read.
     */
    void pauseAndVerifyAll(long timeoutMs) throws InterruptedException {
        pause(timeoutMs);
        try {
            verifyAll();
        } finally {
            resume();
        }
    }

    /** Lets every lane finish its request and idle until {@link #resume()}; fails on timeout. */
    void pause(long timeoutMs) throws InterruptedException {
        paused = true;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (busy.get() > 0) {
            if (System.nanoTime() > deadline) {
                paused = false;
                throw new AssertionError("lanes still busy " + timeoutMs + " ms after pausing; " + summary());
            }
            Thread.sleep(5); // polling a counter: there is no event to wait on
        }
    }

    void resume() {
        paused = false;
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

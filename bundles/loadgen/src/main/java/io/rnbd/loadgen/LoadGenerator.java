package io.rnbd.loadgen;

import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockPlug;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Drives any {@link BlockDevice} with a {@link LoadSpec}, like fio with an async engine: a
 * slot per queue-depth unit, each with its own buffer, resubmitted as soon as its IO completes.
 * One thread of the run submits every IO (see {@link #submitLoop}), so {@link #start} returns
 * at once and a device that completes inline neither recurses nor starves slots; the thread
 * ends with the run (it stays parked only if the device never completes an IO). Slots that
 * are ready together, up to the spec's batch, are submitted under one
 * {@link BlockDevice#plug plug}. With
 * verification no two IOs touch one
 * block at the same time, and every read of a block written in this run must return exactly
 * the last completed write (see {@link BlockPattern}). Plain Java: no OSGi, no logging.
 */
public final class LoadGenerator {
    private static final long UNKNOWN = 1L << 61;
    private static final int MAX_PROBLEMS = 10;

    private final BlockDevice dev;
    private final LoadSpec spec;
    private final LongSupplier nanoTime;
    private final ScheduledExecutorService timer;
    private volatile ScheduledExecutorService ownedTimer;
    private final LoadStats stats = new LoadStats();
    private final long base;
    private final long blocks;
    private final int bs;
    /** Per block with verification: generation of the last completed write, shifted left, low bit = busy. */
    private final AtomicLongArray blockState;
    private final AtomicLong generation = new AtomicLong();
    private final AtomicLong cursor = new AtomicLong();
    private final AtomicLong issued = new AtomicLong();
    private final AtomicInteger activeSlots;
    private final List<Slot> slots = new ArrayList<>();
    private final LinkedBlockingQueue<Slot> ready = new LinkedBlockingQueue<>();
    /** Guarded by itself. */
    private final List<String> problems = new ArrayList<>();
    private final AtomicReference<String> stopReason = new AtomicReference<>();
    private final AtomicBoolean started = new AtomicBoolean();
    private final CompletableFuture<LoadResult> result = new CompletableFuture<>();
    private volatile long startNanos;
    private volatile long deadline;
    private volatile ScheduledFuture<?> progressTask;
    private LoadStats.Counters lastCounters;
    private long lastProgressNanos;

    /** Real time; a daemon timer thread of its own for progress, stopped when the run ends. */
    public LoadGenerator(BlockDevice dev, LoadSpec spec) {
        this(dev, spec, null, System::nanoTime);
    }

    /**
     * @param timer    runs the progress callback; not shut down by this class (null: make one)
     * @param nanoTime the clock for latencies, the duration and rates
     * @throws IllegalArgumentException if the spec does not fit the device
     */
    public LoadGenerator(BlockDevice dev, LoadSpec spec, ScheduledExecutorService timer, LongSupplier nanoTime) {
        spec.validateFor(dev);
        this.dev = dev;
        this.spec = spec;
        this.nanoTime = nanoTime;
        this.timer = timer;
        this.bs = spec.blockSize();
        this.base = spec.offset();
        this.blocks = spec.rangeLength(dev) / bs;
        if (spec.verify() && blocks > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("verify supports at most " + Integer.MAX_VALUE + " blocks: use a larger block size or a range");
        }
        this.blockState = spec.verify() ? new AtomicLongArray((int) blocks) : null;
        SplittableRandom seeds = new SplittableRandom(spec.seed());
        for (int i = 0; i < spec.queueDepth(); i++) {
            Slot s = new Slot(ByteBuffer.allocateDirect(bs), seeds.split());
            if (!spec.verify()) {
                while (s.buf.remaining() >= Long.BYTES) {
                    s.buf.putLong(s.rnd.nextLong());
                }
            }
            slots.add(s);
        }
        this.activeSlots = new AtomicInteger(slots.size());
    }

    /** Live counters and histograms of this run. */
    public LoadStats stats() {
        return stats;
    }

    /**
     * Starts the run; the future completes when the duration or IO count is reached, too many
     * IOs failed, or {@link #stop()} was called, and every IO in flight has completed.
     *
     * @param progress called about once a second on the timer thread, or null
     */
    public CompletableFuture<LoadResult> start(Consumer<LoadProgress> progress) {
        if (!started.compareAndSet(false, true)) {
            throw new IllegalStateException("a load generator runs once");
        }
        startNanos = nanoTime.getAsLong();
        // capped so that now - deadline cannot overflow whatever origin nanoTime has
        long cap = Long.MAX_VALUE / 4;
        long d = spec.duration().isZero() || spec.duration().compareTo(Duration.ofNanos(cap)) > 0
                ? cap : spec.duration().toNanos();
        deadline = startNanos + d;
        if (progress != null) {
            lastCounters = stats.counters();
            lastProgressNanos = startNanos;
            ScheduledExecutorService t = timer;
            if (t == null) {
                t = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "rnbd-loadgen-progress"));
                ownedTimer = t;
            }
            progressTask = t.scheduleAtFixedRate(() -> progress(progress), 1, 1, TimeUnit.SECONDS);
        }
        ready.addAll(slots);
        daemon(this::submitLoop, "rnbd-loadgen").start();
        return result;
    }

    /** Ends the run early: no new IO, the result completes when the inflight IO has. */
    public void stop() {
        stopReason.compareAndSet(null, "stopped");
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /**
     * The submitter: the only thread that calls the device. Completions just queue their slot,
     * so a device whose submit blocks (waiting for a permit) never blocks its own completion
     * thread, and one that completes inline takes its turn behind the other slots.
     */
    private void submitLoop() {
        int batch = Math.min(spec.batch(), spec.queueDepth());
        List<Slot> burst = new ArrayList<>(batch);
        while (activeSlots.get() > 0) {
            try {
                burst.add(ready.take());
            } catch (InterruptedException e) {
                stop();
                continue;
            }
            ready.drainTo(burst, batch - 1);
            if (burst.size() == 1) {
                issue(burst.get(0));
            } else {
                // what is ready goes out together: one post per connection for an RNBD device
                try (BlockPlug plug = dev.plug()) {
                    for (Slot s : burst) {
                        issue(s);
                    }
                }
            }
            burst.clear();
        }
    }

    private boolean admit() {
        if (stopReason.get() != null) {
            return false;
        }
        if (spec.maxErrors() > 0 && stats.errors() >= spec.maxErrors()) {
            stopReason.compareAndSet(null, "errors");
            return false;
        }
        if (nanoTime.getAsLong() - deadline >= 0) {
            stopReason.compareAndSet(null, "duration");
            return false;
        }
        if (spec.ioCount() > 0 && issued.getAndIncrement() >= spec.ioCount()) {
            stopReason.compareAndSet(null, "io count");
            return false;
        }
        return true;
    }

    private void issue(Slot s) {
        if (!admit()) {
            if (activeSlots.decrementAndGet() == 0) {
                finish();
            }
            return;
        }
        s.read = spec.readPercent() == 100 || (spec.readPercent() > 0 && s.rnd.nextInt(100) < spec.readPercent());
        s.block = pick(s.rnd);
        s.offset = base + s.block * bs;
        ByteBuffer b = s.buf.clear();
        if (blockState != null) {
            s.generation = s.read ? blockState.get((int) s.block) >>> 1 : generation.incrementAndGet();
            if (!s.read) {
                BlockPattern.fill(b, s.offset, s.generation);
            }
        }
        s.submitted = nanoTime.getAsLong();
        CompletableFuture<Void> f;
        try {
            f = s.read ? dev.read(s.offset, b) : dev.write(s.offset, b, false);
            if (f == null) {
                f = CompletableFuture.failedFuture(new IllegalStateException("the device returned no future"));
            }
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        f.whenComplete((v, t) -> complete(s, t));
    }

    private long pick(SplittableRandom rnd) {
        while (true) {
            long b = spec.random() ? rnd.nextLong(blocks) : Math.floorMod(cursor.getAndIncrement(), blocks);
            if (blockState == null) {
                return b;
            }
            long st = blockState.get((int) b);
            // with verification a block is never in two IOs at once; more blocks than slots ends the loop
            if ((st & 1) == 0 && blockState.compareAndSet((int) b, st, st | 1)) {
                return b;
            }
        }
    }

    private void complete(Slot s, Throwable t) {
        long latency = nanoTime.getAsLong() - s.submitted;
        long keep = s.generation;
        if (t == null && s.read) {
            stats.read(bs, latency);
            if (blockState != null && s.generation != 0 && s.generation != UNKNOWN) {
                String bad = BlockPattern.check(s.buf.clear(), s.offset, s.generation);
                stats.verified(bad == null);
                if (bad != null) {
                    problem("verify: " + bad);
                }
            }
        } else if (t == null) {
            stats.write(bs, latency);
        } else {
            stats.error();
            problem((s.read ? "read" : "write") + " at " + s.offset + ": " + describe(t));
            if (!s.read) {
                keep = UNKNOWN;
            }
        }
        if (blockState != null) {
            blockState.set((int) s.block, keep << 1);
        }
        ready.add(s);
    }

    private void problem(String line) {
        synchronized (problems) {
            if (problems.size() < MAX_PROBLEMS) {
                problems.add(line);
            }
        }
    }

    private static String describe(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof BlockIoException) {
            return t.getMessage();
        }
        return t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName();
    }

    private void progress(Consumer<LoadProgress> callback) {
        long now = nanoTime.getAsLong();
        LoadStats.Counters c = stats.counters();
        double dt = Math.max(1, now - lastProgressNanos) / 1e9;
        double iops = (c.ios() - lastCounters.ios()) / dt;
        double mib = (c.bytes() - lastCounters.bytes()) / dt / (1 << 20);
        lastCounters = c;
        lastProgressNanos = now;
        try {
            callback.accept(new LoadProgress(now - startNanos, c, iops, mib));
        } catch (RuntimeException e) {
            // a failing printer must not end the run or the timer
        }
    }

    private void finish() {
        long elapsed = nanoTime.getAsLong() - startNanos;
        ScheduledFuture<?> p = progressTask;
        if (p != null) {
            p.cancel(false);
        }
        if (ownedTimer != null) {
            stopOwnTimer();
        }
        List<String> copy;
        synchronized (problems) {
            copy = List.copyOf(problems);
        }
        result.complete(new LoadResult(spec, elapsed, stats.counters(), stats.readLatency(), stats.writeLatency(),
                stopReason.get(), copy));
    }

    private void stopOwnTimer() {
        ScheduledExecutorService t = ownedTimer;
        t.shutdown();
        try {
            t.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One unit of queue depth: its buffer and its current IO. */
    private static final class Slot {
        final ByteBuffer buf;
        final SplittableRandom rnd;
        boolean read;
        long block;
        long offset;
        long generation;
        long submitted;

        Slot(ByteBuffer buf, SplittableRandom rnd) {
            this.buf = buf;
            this.rnd = rnd;
        }
    }
}

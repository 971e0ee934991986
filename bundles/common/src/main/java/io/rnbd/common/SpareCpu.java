package io.rnbd.common;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * Whether a CPU is spare right now: fewer runnable tasks in the system than CPUs, counting
 * the caller. A busy-polling IO thread asks before it starts a poll, as the kernel's
 * busy loops (KVM halt polling, {@code single_task_running()}) ask whether anyone else wants
 * the CPU; userspace cannot see its own run queue, so the system-wide count of runnable
 * tasks ({@code /proc/loadavg}'s fourth field, read without reopening) stands in for it.
 *
 * <p>Without that file (not Linux, or unreadable) the answer is always yes, so polling
 * behaves as configured. In a container /proc/loadavg counts the whole host while the CPU
 * count is the container's: then the answer is more often no, and polling, which is only
 * ever an optimisation, happens less. One instance per IO thread; not thread-safe, except that
 * the probes {@link #system} gives share a {@link Share} on purpose.
 */
public final class SpareCpu implements AutoCloseable {
    public static final Path LOADAVG = Path.of("/proc/loadavg");

    /**
     * How long a reading of the run queue serves every probe of a process: the hops of one
     * depth-1 IO (the gateway's reader, each soft device's IO thread) each run out of work within
     * a few tens of microseconds of one another, and each asking the file itself cost 3.2 µs per
     * IO (docs/perf.md §7, run q1). The run queue a reading this old shows is still the one the
     * next poll would compete in.
     */
    public static final long SHARED_READING_NANOS = 50_000;

    private static final int NO_READING = Integer.MIN_VALUE;

    /**
     * What a process's probes share: how many of its threads poll now, and the last reading of
     * the run queue with the time it was taken. A reader may see a reading newer than the time
     * it checked, never an older one (the count is written before the time).
     */
    public static final class Share {
        final AtomicInteger pollers = new AtomicInteger();
        private volatile int running = NO_READING;
        private volatile long readAt;

        /** How many of the process's threads poll now. */
        public int pollers() {
            return pollers.get();
        }
    }

    /** Shared by every probe {@link #system} gives. */
    private static final Share SYSTEM = new Share();

    private final FileChannel loadavg;
    private final int cpus;
    private final ByteBuffer buf = ByteBuffer.allocateDirect(128);
    private final Share share;
    private final int maxPollers;
    /** 0: every question reads the file. */
    private final long readingNanos;
    private final LongSupplier clock;

    /**
     * The system's: /proc/loadavg against the CPUs this JVM may use, and at most CPUs − 1 of the
     * process's threads polling at once (at least one), so that a depth-1 IO's next hop, woken
     * on the remaining CPU, never waits behind pollers yielding to one another; one reading of
     * the run queue serves them all for {@link #SHARED_READING_NANOS}.
     */
    public static SpareCpu system() {
        int cpus = Runtime.getRuntime().availableProcessors();
        return new SpareCpu(LOADAVG, cpus, SYSTEM, Math.max(1, cpus - 1), SHARED_READING_NANOS, System::nanoTime);
    }

    /** A probe of its own: no limit on pollers, each question reads the file. */
    public SpareCpu(Path loadavg, int cpus) {
        this(loadavg, cpus, new Share(), Integer.MAX_VALUE, 0, System::nanoTime);
    }

    /**
     * A probe whose polls take one of {@code maxPollers} slots counted in {@code share}, and whose
     * questions take the share's reading while it is younger than {@code readingNanos} on
     * {@code clock}.
     */
    public SpareCpu(Path loadavg, int cpus, Share share, int maxPollers, long readingNanos, LongSupplier clock) {
        FileChannel ch;
        try {
            ch = FileChannel.open(loadavg, StandardOpenOption.READ);
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            ch = null;
        }
        this.loadavg = ch;
        this.cpus = cpus;
        this.share = share;
        this.maxPollers = maxPollers;
        this.readingNanos = readingNanos;
        this.clock = clock;
    }

    /** Takes a poller slot; false when the limit of pollers is reached. Pair with {@link #leavePoll}. */
    public boolean enterPoll() {
        AtomicInteger pollers = share.pollers;
        while (true) {
            int n = pollers.get();
            if (n >= maxPollers) {
                return false;
            }
            if (pollers.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /** Gives back the slot {@link #enterPoll} took. */
    public void leavePoll() {
        share.pollers.decrementAndGet();
    }

    /** Whether the probe can see the run queue at all (else {@link #available} is always true). */
    public boolean probing() {
        return loadavg != null;
    }

    /** False once closed (or if the file never opened). */
    public boolean isOpen() {
        return loadavg != null && loadavg.isOpen();
    }

    /** True unless more tasks are runnable than there are CPUs, the caller included. */
    public boolean available() {
        if (loadavg == null) {
            return true;
        }
        long now = readingNanos > 0 ? clock.getAsLong() : 0;
        int running;
        if (readingNanos > 0 && now - share.readAt < readingNanos && (running = share.running) != NO_READING) {
            return running < 0 || running <= cpus;
        }
        try {
            buf.clear();
            running = runnable(buf, loadavg.read(buf, 0));
        } catch (IOException e) {
            return true;
        }
        if (readingNanos > 0) {
            share.running = running;
            share.readAt = now;
        }
        return running < 0 || running <= cpus;
    }

    /** What a busy poll looks at between yields ({@link #spin}). */
    @FunctionalInterface
    public interface Ready {
        boolean now() throws IOException;
    }

    /** A yield that kept the poller off the CPU this long: another thread needed it. */
    static final long YIELD_LOST_NANOS = 20_000;

    /**
     * The busy poll of every IO thread that has one (the soft devices' and the NBD gateway
     * readers' {@code poll.usec}, for a window {@link AdaptivePoll} chooses): look at {@code ready} for up to {@code nanos}, yielding
     * between looks so that a thread woken on this CPU (typically the one our last answer
     * woke) runs at once; and, like the kernel's busy loop that stops on
     * {@code need_resched()}, give up when a yield kept us off the CPU for
     * {@link #YIELD_LOST_NANOS}, since another thread needs it. Whether to poll at all is the
     * caller's question ({@link #available}), asked once per poll. True when ready.
     */
    public static boolean spin(long nanos, Ready ready) throws IOException {
        return spin(System::nanoTime, nanos, ready);
    }

    /** {@link #spin(long, Ready)} on {@code clock} (tests: fake time). */
    public static boolean spin(LongSupplier clock, long nanos, Ready ready) throws IOException {
        long now = clock.getAsLong();
        long end = now + nanos;
        do {
            if (ready.now()) {
                return true;
            }
            Thread.yield();
            long t = clock.getAsLong();
            if (t - now > YIELD_LOST_NANOS) {
                return false;
            }
            now = t;
        } while (now - end < 0);
        return false;
    }

    /**
     * The runnable count from "0.52 0.58 0.59 3/467 12345": the number before the slash in
     * the fourth field; -1 if the text has no such number.
     */
    static int runnable(ByteBuffer text, int length) {
        int field = 0;
        int value = -1;
        for (int i = 0; i < length; i++) {
            byte b = text.get(i);
            if (field < 3) {
                if (b == ' ') {
                    field++;
                }
            } else if (b >= '0' && b <= '9') {
                value = (value < 0 ? 0 : value * 10) + (b - '0');
                if (value > 1_000_000) {
                    return -1;
                }
            } else {
                return b == '/' ? value : -1;
            }
        }
        return -1;
    }

    @Override
    public void close() {
        if (loadavg != null) {
            try {
                loadavg.close();
            } catch (IOException e) {
                // a read-only descriptor: nothing is lost
            }
        }
    }
}

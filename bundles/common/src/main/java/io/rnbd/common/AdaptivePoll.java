package io.rnbd.common;

import java.io.IOException;
import java.util.function.LongSupplier;

/**
 * The busy poll of one IO thread, adaptive as KVM's halt polling is ({@code kvm_vcpu_halt} in
 * virt/kvm/kvm_main.c: each vCPU's {@code halt_poll_ns} grows and shrinks with how long the vCPU
 * actually stayed idle, up to the configured maximum). Used by the soft RDMA devices' IO threads
 * and the NBD gateway's readers ({@code poll.usec}, the maximum here). An IO thread that runs out
 * of work calls, in this order:
 *
 * <pre>
 *   if (!poll.idle(ready)) { sleep in the selector }   // polls first, for up to the window
 *   poll.woke(event);     // at once when it runs again: did something arrive (false: a timeout)?
 *   ... handle what arrived ...
 *   poll.served(n);       // how many completions that wake brought
 * </pre>
 *
 * The window, how long to poll before sleeping, starts at 0, so a thread that has no work never
 * polls, and an idle appliance costs what it cost without polling:
 * <ul>
 * <li>an idle period that the window missed but that ended within the maximum (the work came back
 * soon after the thread went to sleep) grows it: doubled, from {@link #GROW_START_NANOS}, up to
 * the maximum (KVM's {@code halt_poll_ns_grow} 2, {@code halt_poll_ns_grow_start} 10 µs);</li>
 * <li>an idle period longer than the maximum (the work stopped), or one that ended in a timeout,
 * shrinks it: halved, and 0 once under the start (KVM's {@code halt_poll_ns_shrink} 2);</li>
 * <li>a wake that brought more than {@link #DENSE} completions shrinks it as well: then the work
 * comes in batches that a sleeping thread collects whole, while a poller takes them one at a time
 * and wakes the thread it completes to for each (on two vCPUs that cost 8–11 % of the IOPS at
 * depth 32, docs/perf.md §4); KVM has no such rule, NAPI's switch from polling back to
 * interrupts under load is the nearest;</li>
 * <li>an idle period the poll caught leaves it as it is.</li>
 * </ul>
 * A poll begins only when the caller finds it worth it (the NBD reader: few requests in flight),
 * the window is open, fewer of the process's threads poll than its limit ({@link SpareCpu#enterPoll}:
 * on two CPUs one, so the thread a depth-1 IO wakes next never waits behind two pollers yielding to
 * each other) and a CPU is spare ({@link SpareCpu#available}, KVM's
 * {@code single_task_running()}), and it gives way as soon as a yield kept the thread off the CPU
 * ({@link SpareCpu#spin}). One instance per thread, not thread-safe; the counters may be read
 * from any thread.
 */
public final class AdaptivePoll implements AutoCloseable {
    /** The first window after an idle period the window missed (KVM's halt_poll_ns_grow_start). */
    public static final long GROW_START_NANOS = 10_000;
    /** A wake that brought more completions than this is dense: polling would break its batches up. */
    public static final int DENSE = 2;

    private final long maxNanos;
    /** Null when the maximum is 0. */
    private final SpareCpu spareCpu;
    private final LongSupplier clock;
    /** False: the window stays at the maximum ({@link #fixed}). */
    private final boolean adaptive;
    private long window;
    private long idleSince;
    private boolean idle;
    /** Polls begun, polls that found work, polls not begun (no CPU spare, or the process at its limit of pollers; written by the owner only). */
    private volatile long polls;
    private volatile long hits;
    private volatile long skipped;

    /**
     * @param maxNanos the largest window (0: never poll)
     * @param spareCpu asked before each poll; required when {@code maxNanos} &gt; 0, closed with this
     * @param clock    nanoseconds (tests: fake time)
     */
    public AdaptivePoll(long maxNanos, SpareCpu spareCpu, LongSupplier clock) {
        this(maxNanos, spareCpu, clock, true);
    }

    private AdaptivePoll(long maxNanos, SpareCpu spareCpu, LongSupplier clock, boolean adaptive) {
        if (maxNanos < 0) {
            throw new IllegalArgumentException("poll time must not be negative: " + maxNanos);
        }
        if (maxNanos > 0 && spareCpu == null) {
            throw new IllegalArgumentException("a polling thread needs a spare CPU probe");
        }
        this.maxNanos = maxNanos;
        this.spareCpu = maxNanos > 0 ? spareCpu : null;
        this.clock = clock;
        this.adaptive = adaptive;
        this.window = adaptive ? 0 : maxNanos;
    }

    /**
     * A window that never adapts: every idle period polls for {@code nanos} (if a CPU is spare),
     * as {@code poll.usec} did before it adapted. For tests that must see work arrive during a
     * poll, and for measuring what the adaptation buys.
     */
    public static AdaptivePoll fixed(long nanos, SpareCpu spareCpu, LongSupplier clock) {
        return new AdaptivePoll(nanos, spareCpu, clock, false);
    }

    /** A thread that never polls. */
    public static AdaptivePoll never() {
        return new AdaptivePoll(0, null, System::nanoTime);
    }

    /** {@link #idle(SpareCpu.Ready, boolean)}, worth it. */
    public boolean idle(SpareCpu.Ready ready) throws IOException {
        return idle(ready, true);
    }

    /**
     * The thread ran out of work: an idle period begins. Polls {@code ready} for up to the window
     * if the caller finds it {@code worthIt} and a CPU is spare. True when {@code ready} said yes
     * (the thread need not sleep); false: sleep, then call {@link #woke}.
     */
    public boolean idle(SpareCpu.Ready ready, boolean worthIt) throws IOException {
        idleSince = clock.getAsLong();
        idle = true;
        long w = window;
        if (w <= 0 || !worthIt) {
            return false;
        }
        if (!spareCpu.enterPoll()) {
            skipped++;
            return false;
        }
        boolean found;
        try {
            if (!spareCpu.available()) {
                skipped++;
                return false;
            }
            polls++;
            found = SpareCpu.spin(clock, w, ready);
        } finally {
            spareCpu.leavePoll();
        }
        if (!found) {
            return false;
        }
        hits++;
        return true;
    }

    /**
     * The idle period begun by {@link #idle} ended: {@code event} when something arrived, false
     * when the sleep merely timed out. Adapts the window (class comment). Call as soon as the
     * thread runs again, before handling what arrived, so that the handling is not counted as idle.
     */
    public void woke(boolean event) {
        if (!idle) {
            return;
        }
        idle = false;
        if (!adaptive || maxNanos == 0) {
            return;
        }
        long idleNanos = clock.getAsLong() - idleSince;
        if (!event || idleNanos > maxNanos) {
            shrink();
        } else if (idleNanos > window && window < maxNanos) {
            grow();
        }
    }

    /** The wake brought {@code completions}: more than {@link #DENSE} shrinks the window. */
    public void served(int completions) {
        if (adaptive && completions > DENSE) {
            shrink();
        }
    }

    private void grow() {
        window = Math.min(maxNanos, Math.max(GROW_START_NANOS, window * 2));
    }

    private void shrink() {
        long w = window / 2;
        window = w < GROW_START_NANOS ? 0 : w;
    }

    /** The window now: how long the next idle period will poll, at most. */
    public long windowNanos() {
        return window;
    }

    /** The configured maximum (0: never polls). */
    public long maxNanos() {
        return maxNanos;
    }

    /** Polls begun. */
    public long polls() {
        return polls;
    }

    /** Polls that found work before their window ended. */
    public long hits() {
        return hits;
    }

    /** Polls the window called for but not begun: no CPU was spare, or the process polled on its limit of threads. */
    public long skipped() {
        return skipped;
    }

    @Override
    public void close() {
        if (spareCpu != null) {
            spareCpu.close();
        }
    }
}

package io.rnbd.rnbd.server.internal;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockStats;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportState;
import io.rnbd.rnbd.api.RnbdServerAdmin.HaInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin.Opener;
import io.rnbd.rnbd.api.SharedDevice;
import io.rnbd.rnbd.api.SizeWatch;
import io.rnbd.rnbd.api.Sizes;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One export: its backend device while the backend service is there, its openers, and
 * the IO that waits while the backend is gone. State moves through {@link #moveTo} only.
 * An export of several servers ({@code ha}) has a {@link ExportRole} too, which says what IO
 * this server may run (only the active one changes the storage).
 */
final class Export implements ExportRole.Owner {
    enum State { OFFLINE, ONLINE, CLOSED }

    private static final Logger LOG = LoggerFactory.getLogger(Export.class);
    private static final Map<State, Set<State>> MOVES = new EnumMap<>(Map.of(
            State.OFFLINE, EnumSet.of(State.ONLINE, State.CLOSED),
            State.ONLINE, EnumSet.of(State.OFFLINE, State.CLOSED),
            State.CLOSED, EnumSet.noneOf(State.class)));
    /** Bounded, so a stuck backend cannot hang the thread taking it away. */
    private static final long FLUSH_ON_OFFLINE_SECONDS = 10;

    private record Waiter(Function<BlockDevice, CompletableFuture<Void>> op, boolean mutating, long timeoutMs,
                          IntConsumer done, ScheduledFuture<?>[] timer) {
    }

    private final ExportConfig config;
    private final ScheduledExecutorService scheduler;
    private final BlockStats stats = new BlockStats();
    private final Set<Opening> openers = new LinkedHashSet<>();
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    /** Requests the backend has held beyond backend.timeout.ms and not given back yet; guarded by this. */
    private int slowRequests;
    private State state = State.OFFLINE;
    private BlockDevice device;
    /** The device's size changes made behind our back (file grown, rbd resize), while it is open. */
    private SizeWatch sizeWatch = SizeWatch.NONE;
    /** A shrink is under way: new opens wait for it (EAGAIN) rather than map the old size. */
    private boolean shrinking;
    private Geometry geometry;
    private String lastError;
    /** This server's part among several ({@code ha}); null for an export of its own. */
    private final ExportRole role;
    /** What brings this export back after a fence: its table closes and reopens it. */
    private final Consumer<Export> reopen;
    /** Whether an offline.wait.ms expiry was logged since the export was last online; guarded by this. */
    private boolean expiryLogged;

    Export(ExportConfig config, ScheduledExecutorService scheduler) {
        this(config, scheduler, null, e -> { });
    }

    Export(ExportConfig config, ScheduledExecutorService scheduler, HaSettings ha, Consumer<Export> reopen) {
        this.config = config;
        this.scheduler = scheduler;
        this.lastError = "backend '" + config.backend() + "' not available";
        this.reopen = reopen;
        this.role = config.ha() ? new ExportRole(this, ha, scheduler, System::nanoTime)
                : null;
    }

    @Override
    public String name() {
        return config.name();
    }

    /** The several-servers role, null for an export of one server. */
    ExportRole role() {
        return role;
    }

    HaInfo haInfo() {
        return role == null ? HaInfo.NONE : role.info();
    }

    @Override
    public void reopenAfterFence() {
        reopen.accept(this);
    }

    ExportConfig config() {
        return config;
    }

    BlockStats stats() {
        return stats;
    }

    private void moveTo(State to) {
        if (!MOVES.get(state).contains(to)) {
            throw new IllegalStateException("export " + name() + ": " + state + " -> " + to + " not allowed");
        }
        LOG.info("export {}: {} -> {}", name(), state, to);
        state = to;
    }

    synchronized State state() {
        return state;
    }

    /**
     * The backend is there: open the device and let waiting IO run. False when the open
     * failed (a file not there yet, a cluster not answering): the server tries again later,
     * so the same reason is logged once as a WARN and then only at debug level.
     */
    boolean online(BlockBackend backend) {
        BlockDevice dev;
        try {
            dev = role != null ? backend.openShared(config.backendParams())
                    : backend.open(config.name(), config.backendParams(), config.readOnly());
        } catch (IOException | RuntimeException e) {
            String why = "open failed: " + e.getMessage();
            boolean again;
            synchronized (this) {
                again = why.equals(lastError);
                lastError = why;
            }
            if (again) {
                LOG.debug("export {}: backend {} still fails to open: {}", name(), config.backend(), e.getMessage());
            } else {
                LOG.warn("export {}: backend {} failed to open: {}", name(), config.backend(), e.getMessage());
            }
            return false;
        }
        List<Waiter> ready;
        synchronized (this) {
            if (state != State.OFFLINE) {
                dev.close();
                return state == State.ONLINE;
            }
            device = dev;
            geometry = Geometry.of(dev);
            lastError = "";
            expiryLogged = false;
            moveTo(State.ONLINE);
            ready = new ArrayList<>(waiters);
            waiters.clear();
        }
        SizeWatch watch = dev.watchSize(bytes -> sizeChanged(dev, bytes));
        synchronized (this) {
            if (device == dev) {
                sizeWatch = watch;
            } else {
                watch.close();
            }
        }
        if (role != null) {
            role.opened((SharedDevice) dev);
        }
        // Whoever takes a waiter out of the queue (under the lock) completes it; the timer
        // only completes waiters it still finds there.
        for (Waiter w : ready) {
            w.timer()[0].cancel(false);
            runOn(dev, w.op(), w.mutating(), w.timeoutMs(), w.done());
        }
        return true;
    }

    /** Whether the backend should be asked again: offline with the backend there but its open failed. */
    synchronized boolean openFailed() {
        return state == State.OFFLINE && lastError.startsWith("open failed: ");
    }

    /**
     * {@code dev} reports {@code bytes}: what OPEN_RSP says from now on, and the bound IO is
     * checked against. Clients learn it when they next OPEN (see docs/protocol.md, resize).
     */
    private void sizeChanged(BlockDevice dev, long bytes) {
        long before;
        synchronized (this) {
            if (device != dev || geometry.size() == bytes) {
                return;
            }
            before = geometry.size();
            geometry = geometry.withSize(bytes);
        }
        LOG.info("export {}: size {} -> {} bytes", name(), before, bytes);
    }

    /**
     * Read the device's size now, as Linux's rnbd-server reads bdev_nr_sectors for every
     * OPEN_RSP: a file grown by {@code truncate -s} is seen by the next OPEN.
     */
    void refreshSize() {
        BlockDevice dev;
        synchronized (this) {
            dev = device;
        }
        if (dev != null) {
            sizeChanged(dev, dev.size());
        }
    }

    /**
     * Grow or shrink the backend's storage ({@code rnbd:export-resize}). A shrink is refused
     * (EBUSY) while any client has the export open: each mapped the old size, and its IO
     * beyond the new end would fail; OPENs that arrive during a shrink get EAGAIN.
     *
     * @return the size afterwards
     */
    long resize(long bytes, long timeoutMs) throws BlockIoException {
        BlockDevice dev;
        boolean shrink;
        synchronized (this) {
            dev = device;
            if (state == State.CLOSED || dev == null) {
                throw new BlockIoException(Errno.ENODEV, "export " + name() + " is " + (state == State.CLOSED
                        ? "being removed" : "offline: " + lastError));
            }
            try {
                Sizes.requireDeviceSize("size " + bytes, bytes);
            } catch (IllegalArgumentException e) {
                throw new BlockIoException(Errno.EINVAL, e.getMessage());
            }
            if (bytes % geometry.logicalBlockSize() != 0) {
                throw new BlockIoException(Errno.EINVAL, "size " + bytes + " is not a multiple of the export's "
                        + "block size " + geometry.logicalBlockSize());
            }
            if (config.readOnly()) {
                throw new BlockIoException(Errno.EROFS, "export " + name() + " is read-only");
            }
            if (shrinking) {
                throw new BlockIoException(Errno.EBUSY, "export " + name() + " is being shrunk already");
            }
            shrink = bytes < geometry.size();
            if (shrink && !openers.isEmpty()) {
                throw new BlockIoException(Errno.EBUSY, "export " + name() + " is open by " + openerNames()
                        + " with " + geometry.size() + " bytes mapped: shrinking to " + bytes
                        + " would fail their IO beyond it (unmap them first)");
            }
            shrinking = shrink;
        }
        try {
            dev.resize(bytes).get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BlockIoException(Errno.EINTR, "interrupted while resizing export " + name());
        } catch (java.util.concurrent.ExecutionException e) {
            throw new BlockIoException(BlockIoException.errnoOf(e), "export " + name() + ": resize failed: "
                    + (e.getCause() == null ? e : e.getCause()).getMessage());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new BlockIoException(Errno.ETIMEDOUT, "export " + name() + ": the backend did not resize within "
                    + timeoutMs + " ms");
        } finally {
            synchronized (this) {
                shrinking = false;
            }
        }
        sizeChanged(dev, dev.size());
        return geometry().size();
    }

    private String openerNames() {
        List<String> names = openers.stream().map(o -> o.session().name()).distinct().sorted().toList();
        return (names.size() == 1 ? "session " : "sessions ") + String.join(", ", names);
    }

    /** The backend is going: make acknowledged writes durable, close the device, hold new IO. */
    void offline(String why) {
        BlockDevice dev;
        synchronized (this) {
            if (state != State.ONLINE) {
                return;
            }
            dev = device;
            device = null;
            lastError = why;
            moveTo(State.OFFLINE);
        }
        if (role != null) {
            role.closed(false);
        }
        stopWatching();
        closeDevice(dev);
    }

    /** Removed from the configuration: fail waiting IO, close the device. */
    List<Opening> close() {
        BlockDevice dev;
        List<Waiter> failed;
        List<Opening> left;
        synchronized (this) {
            if (state == State.CLOSED) {
                return List.of();
            }
            dev = device;
            device = null;
            moveTo(State.CLOSED);
            failed = new ArrayList<>(waiters);
            waiters.clear();
            left = new ArrayList<>(openers);
            openers.clear();
        }
        for (Waiter w : failed) {
            w.timer()[0].cancel(false);
            w.done().accept(Errno.ENODEV);
        }
        if (role != null) {
            role.closed(true);
        }
        stopWatching();
        if (dev != null) {
            closeDevice(dev);
        }
        return left;
    }

    private void stopWatching() {
        SizeWatch w;
        synchronized (this) {
            w = sizeWatch;
            sizeWatch = SizeWatch.NONE;
        }
        w.close();
    }

    private void closeDevice(BlockDevice dev) {
        // the storage refuses a fenced server's flush too, and nothing of it may land anyway
        boolean fenced = role != null && role.role() == io.rnbd.rnbd.api.RnbdServerAdmin.Role.FENCED;
        try {
            if (!fenced) {
                dev.flush().get(FLUSH_ON_OFFLINE_SECONDS, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.warn("export {}: flush before close failed: {}", name(), e.toString());
        }
        try {
            dev.close();
        } catch (RuntimeException e) {
            LOG.warn("export {}: close failed: {}", name(), e.toString());
        }
    }

    /**
     * Register an opener after the access checks: many RO, one RW, a second writer only as
     * MIGRATION; no writer at all on a read-only export.
     */
    synchronized Opening open(ServerSession session, int deviceId, AccessMode mode) throws BlockIoException {
        return open(session, deviceId, mode, false);
    }

    synchronized Opening open(ServerSession session, int deviceId, AccessMode mode, boolean leg)
            throws BlockIoException {
        if (state == State.CLOSED) {
            throw new BlockIoException(Errno.ENODEV, "export " + name() + " is being removed");
        }
        if (geometry == null) {
            throw new BlockIoException(Errno.ENODEV, "export " + name() + " is offline: " + lastError);
        }
        if (shrinking) {
            throw new BlockIoException(Errno.EAGAIN, "export " + name() + " is being shrunk; open it again");
        }
        if (mode != AccessMode.RO) {
            if (config.readOnly()) {
                throw new BlockIoException(Errno.EROFS, "export " + name() + " is read-only");
            }
            long writers = openers.stream().filter(Opening::writable).count();
            long allowed = mode == AccessMode.MIGRATION ? 2 : 1;
            if (writers >= allowed) {
                throw new BlockIoException(Errno.EBUSY, "export " + name() + " already open for writing by "
                        + writers + " session(s); mode " + mode + " refused");
            }
        }
        Opening o = new Opening(deviceId, session, this, mode, leg);
        openers.add(o);
        return o;
    }

    synchronized void release(Opening o) {
        openers.remove(o);
    }

    synchronized List<Opening> openers() {
        return new ArrayList<>(openers);
    }

    synchronized List<Opener> openerInfo() {
        return openers.stream().sorted(Comparator.comparing((Opening o) -> o.session().name()))
                .map(o -> new Opener(o.session().name(), o.mode(), o.deviceId())).toList();
    }

    synchronized Geometry geometry() {
        return geometry;
    }

    synchronized ExportState adminState() {
        return state == State.ONLINE ? ExportState.ONLINE : ExportState.OFFLINE;
    }

    synchronized String lastError() {
        return lastError;
    }

    /**
     * Run {@code op} on the device now; while the backend is away, after it comes back or
     * fail with ENODEV when {@code offline.wait.ms} runs out (at once when it is 0).
     * {@code done} gets 0 or an errno, exactly once.
     *
     * <p>A request is answered only when the backend gives it back, however long that takes,
     * as Linux's rnbd-server waits for its bio: the request's data is the RTRS chunk, and an
     * answer frees that chunk for the client's next request while the backend may still write
     * the old data from it or read into it (a stale write landing at the old offset, a late
     * read overwriting the next write's data). Past {@code timeoutMs} (0 = never) the request
     * is reported instead: counted, logged once and shown as the export's last error, until
     * the backend gives every slow request back. What bounds a hung backend is the client:
     * its request timeout fails the path, and its failover waits on the server for the held
     * copy (rtrs-server's resend rule).
     */
    void submit(Function<BlockDevice, CompletableFuture<Void>> op, boolean mutating, long timeoutMs,
                IntConsumer done) {
        submit(op, mutating ? ExportRole.Kind.CHANGE : ExportRole.Kind.READ, false, "", timeoutMs, done);
    }

    /**
     * {@link #submit(Function, boolean, long, IntConsumer)} with what an export of several
     * servers needs to know: what the request does, and whether its opener maps the export
     * over several servers (an appliance client's leg: it finds the active server itself) or
     * over this one (a Linux host under dm-multipath: its writes move the storage here). The role may run it, refuse it (ENOLINK: not the active server; the
     * request did nothing here) or hold it for the takeover it starts. A request of the active
     * device that fails as a fenced one's do is answered ENOLINK too, and the role learns it lost
     * the storage.
     */
    void submit(Function<BlockDevice, CompletableFuture<Void>> op, ExportRole.Kind kind, boolean leg,
                String session, long timeoutMs, IntConsumer done) {
        boolean mutating = kind != ExportRole.Kind.READ;
        if (role == null) {
            run(op, mutating, timeoutMs, done);
            return;
        }
        IntConsumer fenceAware = errno -> {
            if (errno == Errno.ESHUTDOWN || errno == Errno.ENOLINK
                    || (errno == Errno.EROFS && kind == ExportRole.Kind.CHANGE)) {
                role.lost(Errno.name(errno) + " from the storage");
                done.accept(Errno.ENOLINK);
            } else {
                done.accept(errno);
            }
        };
        switch (role.admit(kind, leg, session, () -> run(op, mutating, timeoutMs, fenceAware),
                done)) {
            case RUN:
                run(op, mutating, timeoutMs, fenceAware);
                break;
            case REFUSE:
                done.accept(Errno.ENOLINK);
                break;
            default:
                break; // QUEUED: the role runs or refuses it
        }
    }

    private void run(Function<BlockDevice, CompletableFuture<Void>> op, boolean mutating, long timeoutMs,
                     IntConsumer done) {
        BlockDevice dev;
        synchronized (this) {
            dev = device;
            if (dev == null && role != null) {
                // another server can serve it: no point waiting for this one's backend
                done.accept(Errno.ENOLINK);
                return;
            }
            if (dev == null) {
                if (state == State.CLOSED || config.offlineWaitMs() == 0) {
                    done.accept(Errno.ENODEV);
                    return;
                }
                Waiter w = new Waiter(op, mutating, timeoutMs, done, new ScheduledFuture<?>[1]);
                waiters.add(w);
                w.timer()[0] = scheduler.schedule(() -> expire(w), config.offlineWaitMs(), TimeUnit.MILLISECONDS);
                return;
            }
        }
        runOn(dev, op, mutating, timeoutMs, done);
    }

    private void expire(Waiter w) {
        boolean removed;
        boolean first;
        String why;
        synchronized (this) {
            removed = waiters.remove(w);
            first = removed && !expiryLogged;
            expiryLogged |= removed;
            why = lastError;
        }
        if (first) {
            LOG.warn("export {}: IO waited offline.wait.ms ({} ms) for its backend ({}); failing it with ENODEV, and "
                    + "every request that waits as long, until the backend is back", name(), config.offlineWaitMs(), why);
        }
        if (removed) {
            w.done().accept(Errno.ENODEV);
        }
    }

    private void runOn(BlockDevice dev, Function<BlockDevice, CompletableFuture<Void>> op, boolean mutating,
                       long timeoutMs, IntConsumer done) {
        CompletableFuture<Void> f;
        try {
            f = op.apply(dev);
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        if (timeoutMs <= 0 || f.isDone()) {
            f.whenComplete((v, t) -> done.accept(t == null ? 0 : BlockIoException.errnoOf(t)));
            return;
        }
        // PENDING -> BACK, or PENDING -> SLOW (under this export's monitor, with the count) -> BACK
        java.util.concurrent.atomic.AtomicInteger progress = new java.util.concurrent.atomic.AtomicInteger(PENDING);
        ScheduledFuture<?> timer;
        try {
            timer = scheduler.schedule(() -> slowIfPending(progress, timeoutMs), timeoutMs, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException stopping) {
            timer = null;
        }
        ScheduledFuture<?> t0 = timer;
        f.whenComplete((v, t) -> {
            if (progress.getAndSet(BACK) == SLOW) {
                cameBack(t);   // waits for slowIfPending to have counted it
            } else if (t0 != null) {
                t0.cancel(false);
            }
            done.accept(t == null ? 0 : BlockIoException.errnoOf(t));
        });
    }

    private static final int PENDING = 0;
    private static final int BACK = 1;
    private static final int SLOW = 2;

    private synchronized void slowIfPending(java.util.concurrent.atomic.AtomicInteger progress, long timeoutMs) {
        if (!progress.compareAndSet(PENDING, SLOW)) {
            return;
        }
        stats.timeout();
        if (slowRequests++ == 0) {
            lastError = "backend has held a request beyond backend.timeout.ms (" + timeoutMs + " ms); it is answered "
                    + "when the backend gives it back";
            LOG.warn("export {}: {}", name(), lastError);
        }
    }

    private synchronized void cameBack(Throwable t) {
        if (--slowRequests == 0) {
            lastError = "";
            LOG.info("export {}: the backend gave every slow request back ({})", name(),
                    t == null ? "the last succeeded" : "the last failed: " + t);
        }
    }
}

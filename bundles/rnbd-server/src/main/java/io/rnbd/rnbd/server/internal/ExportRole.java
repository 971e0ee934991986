package io.rnbd.rnbd.server.internal;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.RnbdServerAdmin.HaInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin.Role;
import io.rnbd.rnbd.api.SharedDevice;
import io.rnbd.rnbd.api.SharedDevice.Holder;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This server's role for an export that several servers serve ({@code ha = true};
 * docs/scale-out.md, "Several servers, one image"): the one transition method over the table
 * of moves, what IO each role lets through, the takeover and its hold-off, and the watch that
 * finds a fence.
 *
 * <pre>
 *   STANDBY --takeover asked--> TAKING_OVER --lock taken--> ACTIVE --fence found--> FENCED
 *      ^                            |  refused or failed                               |
 *      +----------------------------+                                                  |
 *      +-------------------------- the storage opened again, a new identity ----------+
 *      +-------------------------- ACTIVE's device closed (its lock let go) -----------ACTIVE
 * </pre>
 *
 * A STANDBY or FENCED export whose device is closed for another reason (its backend stopped)
 * stays so, without a device: IO is answered ENOLINK and a takeover EAGAIN until it opens again.
 *
 * Who may change the storage: only ACTIVE (and the storage itself refuses every other opener:
 * the device's gate and Ceph's lock and blocklist). A STANDBY serves a Linux host's reads and
 * flushes (its partition scan, dm-multipath's path checker: they never move the storage) and
 * takes over at a Linux host's first change (dm-multipath sends there only after it failed the
 * active path); to an appliance client's mapping over several servers (OPEN's F_LEG: it asks for a
 * takeover itself, with F_TAKEOVER) it answers every request ENOLINK. A takeover of a holder that an appliance server recorded less
 * than {@code ha.holdoff.ms} ago is refused (EBUSY): two clients that each lost a different
 * server cannot make the storage change hands more often than that.
 *
 * <p>Everything that waits for the storage runs on {@code worker}, never on an IO thread.
 */
final class ExportRole {
    /** What {@link #admit} does with a request. */
    enum Admission { RUN, REFUSE, QUEUED }

    /** What a request does to the storage. */
    enum Kind { READ, FLUSH, CHANGE }

    private static final Logger LOG = LoggerFactory.getLogger(ExportRole.class);
    private static final Map<Role, Set<Role>> MOVES = new EnumMap<>(Map.of(
            Role.STANDBY, EnumSet.of(Role.TAKING_OVER),
            Role.TAKING_OVER, EnumSet.of(Role.ACTIVE, Role.STANDBY, Role.FENCED),
            // to STANDBY: its device closed (backend stopped, export removed), which lets go of the lock
            Role.ACTIVE, EnumSet.of(Role.FENCED, Role.STANDBY),
            Role.FENCED, EnumSet.of(Role.STANDBY),
            Role.NONE, EnumSet.noneOf(Role.class)));

    /** What the role needs of its export. */
    interface Owner {
        String name();

        /** The storage was taken from this server: close the device, open it again as a standby. */
        void reopenAfterFence();
    }

    private record Queued(Runnable run, IntConsumer refuse) {
    }

    private final Owner export;
    private final HaSettings settings;
    private final Executor worker;
    private final ScheduledExecutorService scheduler;
    private final LongSupplier nanoTime;

    // guarded by this
    /** Until the first device: FENCED is "no device, an open is coming". */
    private Role role = Role.FENCED;
    private SharedDevice device;
    private CompletableFuture<Holder> takingOver;
    private final List<Queued> queued = new ArrayList<>();
    private Holder holder = Holder.NONE;
    private long takeovers;
    private long lastTakeoverMs;
    private ScheduledFuture<?> watch;
    private boolean closed;

    ExportRole(Owner export, HaSettings settings, ScheduledExecutorService scheduler, LongSupplier nanoTime) {
        this.export = export;
        this.settings = settings;
        this.worker = settings.worker();
        this.scheduler = scheduler;
        this.nanoTime = nanoTime;
    }

    private void moveTo(Role to) {
        if (!MOVES.get(role).contains(to)) {
            throw new IllegalStateException("export " + export.name() + ": role " + role + " -> " + to
                    + " not allowed");
        }
        LOG.info("export {}: {} -> {}", export.name(), role, to);
        role = to;
    }

    synchronized Role role() {
        return role;
    }

    /** Requests waiting for the takeover under way. */
    synchronized int queued() {
        return queued.size();
    }

    /** A new device (first open, or reopened after a fence): a standby with a new identity. */
    void opened(SharedDevice d) {
        synchronized (this) {
            device = d;
            if (role == Role.TAKING_OVER || role == Role.ACTIVE) {
                moveTo(Role.FENCED); // a device replaced under a takeover: its lock went with it
            }
            if (role != Role.STANDBY) {
                moveTo(Role.STANDBY);
            }
            watchLater();
        }
        worker(this::refreshHolder);
    }

    /** The device is closed (backend away, export removed; its close lets go of the lock): no device until {@link #opened}. */
    void closed(boolean forGood) {
        List<Queued> refused;
        synchronized (this) {
            device = null;
            if (role == Role.ACTIVE || role == Role.TAKING_OVER) {
                moveTo(Role.STANDBY);
            }
            closed |= forGood;
            stopWatching();
            refused = takeQueued();
        }
        refused.forEach(q -> q.refuse().accept(Errno.ENOLINK));
    }

    /**
     * What a request may do now. QUEUED: {@code run} runs once the takeover it waits for has the
     * lock, or {@code refuse} gets ENOLINK.
     *
     * @param leg the opener maps the export over several servers (OPEN's F_LEG) and goes to the
     *            active one itself, so a standby answers it ENOLINK
     */
    Admission admit(Kind kind, boolean leg, String session, Runnable run, IntConsumer refuse) {
        boolean start = false;
        synchronized (this) {
            switch (role) {
                case ACTIVE:
                    return Admission.RUN;
                case TAKING_OVER:
                    queued.add(new Queued(run, refuse));
                    return Admission.QUEUED;
                case STANDBY:
                    if (leg) {
                        return Admission.REFUSE;
                    }
                    if (kind != Kind.CHANGE) {
                        return Admission.RUN; // a Linux host's partition scan and path checker; nothing to flush
                    }
                    queued.add(new Queued(run, refuse));
                    start = true;
                    break;
                default:
                    return Admission.REFUSE;
            }
        }
        if (start) {
            takeOver("a write of session " + session + " (dm-multipath moved the host's IO here)");
        }
        return Admission.QUEUED;
    }

    /**
     * Make this server the active one: completes with the holder afterwards (this server), or
     * fails with EBUSY (hold-off), EAGAIN (being reopened after a fence, or the holder changed
     * under the takeover) or the storage's errno.
     */
    CompletableFuture<Holder> takeOver(String why) {
        CompletableFuture<Holder> f;
        SharedDevice d;
        synchronized (this) {
            switch (role) {
                case ACTIVE:
                    return stillHolds(device, holder);
                case TAKING_OVER:
                    return takingOver;
                case STANDBY:
                    if (device != null) {
                        break;
                    }
                    return CompletableFuture.failedFuture(new BlockIoException(Errno.EAGAIN, "export "
                            + export.name() + " is offline here"));
                default:
                    return CompletableFuture.failedFuture(new BlockIoException(Errno.EAGAIN, "export "
                            + export.name() + " was taken over by another server and is being opened again"));
            }
            moveTo(Role.TAKING_OVER);
            f = takingOver = new CompletableFuture<>();
            d = device;
        }
        LOG.info("export {}: taking over: {}", export.name(), why);
        if (!worker(() -> doTakeOver(d, f))) {
            fail(d, f, new BlockIoException(Errno.ESHUTDOWN, "the server is stopping"));
        }
        return f;
    }

    /**
     * Asked to take over what it believes it holds: the storage says whether it still does (a
     * server fenced while idle may not have looked yet), so that a client never takes an old
     * holder's word for it.
     */
    private CompletableFuture<Holder> stillHolds(SharedDevice d, Holder h) {
        CompletableFuture<Holder> f = new CompletableFuture<>();
        boolean queued = worker(() -> {
            try {
                if (d.holds()) {
                    f.complete(h);
                    return;
                }
                lost("the storage no longer counts this server as the lock holder");
            } catch (IOException e) {
                if (BlockIoException.errnoOf(e) == Errno.ESHUTDOWN) {
                    lost(e.getMessage());
                }
            }
            f.completeExceptionally(new BlockIoException(Errno.EAGAIN, "export " + export.name()
                    + " was taken over by another server"));
        });
        if (!queued) {
            f.completeExceptionally(new BlockIoException(Errno.ESHUTDOWN, "the server is stopping"));
        }
        return f;
    }

    private void doTakeOver(SharedDevice d, CompletableFuture<Holder> f) {
        long started = nanoTime.getAsLong();
        try {
            Holder before = d.holder();
            boolean other = before.held() && !before.owner().equals(d.identity());
            long age = settings.now() - before.sinceMillis();
            long holdoffMs = settings.holdoffMs();
            if (other && before.sinceMillis() > 0 && age < holdoffMs) {
                throw new BlockIoException(Errno.EBUSY, "export " + export.name() + " changed hands " + age
                        + " ms ago (to " + (before.server().isEmpty() ? before.owner() : before.server())
                        + "); a server that took it over keeps it at least ha.holdoff.ms (" + holdoffMs + " ms)");
            }
            Holder now = d.takeOver(settings.server(), before);
            long ms = TimeUnit.NANOSECONDS.toMillis(nanoTime.getAsLong() - started);
            List<Queued> run;
            synchronized (this) {
                if (role != Role.TAKING_OVER || device != d) {
                    throw new BlockIoException(Errno.EAGAIN, "export " + export.name() + " changed meanwhile");
                }
                moveTo(Role.ACTIVE);
                holder = now;
                if (other) {
                    takeovers++;
                }
                lastTakeoverMs = ms;
                takingOver = null;
                run = takeQueued();
                watchLater();
            }
            LOG.info("export {}: active (generation {}) after {} ms{}", export.name(), now.generation(), ms,
                    other ? "; " + before.owner() + (before.server().isEmpty() ? "" : " (" + before.server() + ")")
                            + " was fenced" : "");
            f.complete(now);
            run.forEach(q -> q.run().run());
        } catch (IOException | RuntimeException e) {
            fail(d, f, e);
        }
    }

    private void fail(SharedDevice d, CompletableFuture<Holder> f, Exception e) {
        int errno = BlockIoException.errnoOf(e);
        List<Queued> refused;
        boolean fenced = errno == Errno.ESHUTDOWN && !(e.getMessage() != null && e.getMessage().contains("stopping"));
        synchronized (this) {
            if (role == Role.TAKING_OVER && device == d) {
                moveTo(fenced ? Role.FENCED : Role.STANDBY);
            }
            if (f == takingOver) {
                takingOver = null;
            }
            refused = takeQueued();
        }
        LOG.warn("export {}: takeover refused or failed: {}", export.name(), e.getMessage());
        f.completeExceptionally(e);
        refused.forEach(q -> q.refuse().accept(Errno.ENOLINK));
        if (fenced) {
            worker(export::reopenAfterFence);
        }
    }

    /**
     * A request of the active device failed as only a fenced one's do (ESHUTDOWN: blocklisted;
     * ENOLINK, EROFS: its lock is gone): the storage is another server's now.
     */
    void lost(String why) {
        synchronized (this) {
            if (role != Role.ACTIVE) {
                return;
            }
            moveTo(Role.FENCED);
            stopWatching();
        }
        LOG.warn("export {}: fenced: {}; this server writes nothing more and opens the image again as a standby",
                export.name(), why);
        worker(export::reopenAfterFence);
    }

    /** Every {@code ha.probe.ms}: does the active one still hold the storage, and who holds it for the rest. */
    private void probe() {
        SharedDevice d;
        Role r;
        synchronized (this) {
            d = device;
            r = role;
        }
        if (d == null) {
            return;
        }
        if (r == Role.ACTIVE) {
            try {
                if (!d.holds()) {
                    lost("the storage no longer counts this server as the lock holder");
                    return;
                }
            } catch (IOException e) {
                if (BlockIoException.errnoOf(e) == Errno.ESHUTDOWN) {
                    lost(e.getMessage());
                    return;
                }
                LOG.debug("export {}: probe: {}", export.name(), e.getMessage());
            }
        }
        refreshHolder();
    }

    /**
     * Reads who holds the storage. A read is not taken when it shows an older generation than
     * the holder known here: it was made before a takeover that completed while it was on its way
     * (this server's own, or one another server announced), and the storage's generation only
     * grows. Without this, a probe's read from before this server's takeover that landed after
     * it made the export say ACTIVE with the fenced server's generation until the next probe,
     * and a client that had left that generation refuses to follow it (ExportRoleTest).
     */
    private void refreshHolder() {
        SharedDevice d;
        synchronized (this) {
            d = device;
        }
        if (d == null) {
            return;
        }
        try {
            Holder h = d.holder();
            synchronized (this) {
                if (device == d && h.generation() >= holder.generation()) {
                    holder = h;
                }
            }
        } catch (IOException e) {
            LOG.debug("export {}: reading the holder: {}", export.name(), e.getMessage());
        }
    }

    private void watchLater() {
        stopWatching();
        long ms = settings.probeMs();
        if (ms <= 0 || closed) {
            return;
        }
        try {
            watch = scheduler.scheduleWithFixedDelay(() -> worker(this::probe), ms, ms, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopping) {
            watch = null;
        }
    }

    private void stopWatching() {
        if (watch != null) {
            watch.cancel(false);
            watch = null;
        }
    }

    private List<Queued> takeQueued() {
        List<Queued> q = new ArrayList<>(queued);
        queued.clear();
        return q;
    }

    private boolean worker(Runnable r) {
        try {
            worker.execute(r);
            return true;
        } catch (RejectedExecutionException stopping) {
            return false;
        }
    }

    /** For OPEN_RSP and the console. */
    synchronized HaInfo info() {
        return new HaInfo(role, holder.server(), holder.sinceMillis(), holder.generation(), takeovers, lastTakeoverMs);
    }

    synchronized long generation() {
        return holder.generation();
    }
}

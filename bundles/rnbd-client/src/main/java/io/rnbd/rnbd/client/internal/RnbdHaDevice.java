package io.rnbd.rnbd.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockPlug;
import io.rnbd.rnbd.api.BlockStats;
import io.rnbd.rnbd.api.Capabilities;
import io.rnbd.rnbd.api.DeviceClaim;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceInfo;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceState;
import io.rnbd.rnbd.api.RnbdClientAdmin.HaDeviceInfo;
import io.rnbd.rnbd.api.SizeWatch;
import io.rnbd.rnbd.proto.OpenRsp;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One device mapped over several servers that export the same storage ({@code ha = true} on
 * each), one of which is active: the holder of the storage's lock (docs/scale-out.md, "Several
 * servers, one image"). Each server is a <em>leg</em>, an {@link RnbdClientDevice} over that
 * server's session, opened with OPEN's F_LEG; IO goes to the active leg only.
 *
 * <p>When the active leg is lost (its session has no path: the server died, froze, or its paths
 * were cut) or answers that it is not active (ENOLINK: another server took over), the device
 * <em>resolves</em>: it holds new IO and what comes back from the old leg, asks every leg it can
 * reach who is active, and goes to one that answers active with a newer generation than the old
 * one's (that server took the storage over after the old one held it, so it fenced it); if none
 * does, it asks a leg to take the storage over (OPEN's F_TAKEOVER), which breaks the holder's
 * lock and fences it before it answers. Only then is anything resent: <b>a request that was in
 * flight on the lost server goes to another only after that server was fenced</b>, so a stale
 * copy of it can no longer land over a newer write (the path-level FENCE argument, carried
 * across servers: the fence here is the storage's, not the old server's). Requests resent to the
 * same server after it came back go through its RTRS session, whose own FENCE orders them.
 *
 * <p>The device never moves on its own while its active server answers, and failback (to the
 * first session, or another) is an explicit {@link #failback}. A server refuses to take over a
 * holder that took over less than its hold-off ago (EBUSY): the device waits and asks again.
 */
public final class RnbdHaDevice implements RemoteBlockDevice, RnbdClientDevice.Leg {
    private static final Logger LOG = LoggerFactory.getLogger(RnbdHaDevice.class);
    /**
     * How long IO waits for an active server before it fails (EIO), unless configured: a frozen
     * server is found after up to hb.interval.ms x (hb.missed.max + 1) (30 s with RTRS's
     * defaults), and a takeover may wait out the rest of a hold-off (10 s) before it is made.
     */
    public static final long DEFAULT_IO_TIMEOUT_MS = 60_000;
    /** At map time, how long to wait for every leg before taking the storage over at the first that answers. */
    static final long SETTLE_MS = 2_000;
    private static final long RETRY_MIN_MS = 100;
    private static final long RETRY_MAX_MS = 1_000;

    private enum State { PENDING, ACTIVE, RESOLVING, UNMAPPED }

    /** One caller request, sent to the active leg, and again to the next one if that one is lost. */
    private final class Request {
        final int op;
        final long offset;
        final long length;
        final ByteBuffer buf;
        final boolean fua;
        final CompletableFuture<Void> future = new CompletableFuture<>();
        final long startNanos = nanos.getAsLong();
        /** Guarded by the device: the attempt whose answer counts. */
        int attempt;

        Request(int op, long offset, long length, ByteBuffer buf, boolean fua) {
            this.op = op;
            this.offset = offset;
            this.length = length;
            this.buf = buf;
            this.fua = fua;
        }

        CompletableFuture<Void> on(RnbdClientDevice leg) {
            return switch (op) {
                case OP_READ -> leg.read(offset, buf.duplicate());
                case OP_WRITE -> leg.write(offset, buf.duplicate(), fua);
                case OP_FLUSH -> leg.flush();
                case OP_TRIM -> leg.trim(offset, length);
                default -> leg.writeZeroes(offset, length, fua);
            };
        }
    }

    private static final int OP_READ = 0;
    private static final int OP_WRITE = 1;
    private static final int OP_FLUSH = 2;
    private static final int OP_TRIM = 3;
    private static final int OP_ZEROES = 4;

    private final String name;
    private final String exportName;
    private final AccessMode mode;
    private final List<String> sessions;
    private final List<RnbdClientDevice> legs;
    private final DevicePublisher publisher;
    private final ScheduledExecutorService timer;
    private final LongSupplier nanos;
    private final LongSupplier wallClock;
    private final long ioTimeoutMs;
    private final BlockStats stats = new BlockStats();
    private final Claims claims = new Claims();
    private final List<LongConsumer> sizeListeners = new CopyOnWriteArrayList<>();
    private final long mappedAt;

    // guarded by this
    private State state = State.PENDING;
    private RnbdClientDevice active;
    private long activeGeneration = -1;
    private long activeSince;
    /** The leg IO left and the generation it had: a newer one must have fenced it. */
    private RnbdClientDevice left;
    private long leftGeneration = -1;
    private boolean leftLost;
    private long stallStart;
    private long takeovers;
    private long lastStallMs;
    private long maxStallMs;
    private final ArrayDeque<Request> held = new ArrayDeque<>();
    private boolean resolving;
    private ScheduledFuture<?> retry;
    private long retryMs = RETRY_MIN_MS;
    private String failbackTo;
    private final List<CompletableFuture<String>> failbacks = new ArrayList<>();
    private final List<CompletableFuture<RemoteBlockDevice>> openWaiters = new ArrayList<>();
    private boolean published;
    private int lastError;

    /**
     * @param sessions  the sessions, one per server, in order of preference (failback goes to the first)
     * @param timer     resolutions, retries and IO timeouts run on it (owned by the caller)
     * @param ioTimeout how long IO waits for an active server (ms)
     */
    public RnbdHaDevice(String name, List<String> sessions, String exportName, AccessMode mode,
                        DevicePublisher publisher, ScheduledExecutorService timer, long ioTimeout, LongSupplier nanos,
                        LongSupplier wallClock) {
        if (sessions.size() < 2 || sessions.stream().distinct().count() != sessions.size()) {
            throw new IllegalArgumentException("a device over several servers needs two or more different sessions: "
                    + sessions);
        }
        if (mode == AccessMode.RO) {
            throw new IllegalArgumentException("a read-only mapping needs no server to hold the storage: map it over "
                    + "one session");
        }
        this.name = name;
        this.exportName = exportName;
        this.mode = mode;
        this.sessions = List.copyOf(sessions);
        this.publisher = publisher;
        this.timer = timer;
        this.ioTimeoutMs = ioTimeout;
        this.nanos = nanos;
        this.wallClock = wallClock;
        this.mappedAt = nanos.getAsLong();
        List<RnbdClientDevice> l = new ArrayList<>();
        for (String s : sessions) {
            RnbdClientDevice leg = new RnbdClientDevice(name + "@" + s, s, exportName, mode, DevicePublisher.NONE);
            leg.legOf(this);
            leg.watchSize(size -> legSize(leg, size));
            l.add(leg);
        }
        this.legs = List.copyOf(l);
    }

    /** The legs, one per session, in the order given. */
    List<RnbdClientDevice> legs() {
        return legs;
    }

    // ---- the map's future, state and information

    /** Completes when IO first has an active server (the map), or at once if it has one. */
    CompletableFuture<RemoteBlockDevice> open() {
        CompletableFuture<RemoteBlockDevice> f = new CompletableFuture<>();
        synchronized (this) {
            if (state == State.UNMAPPED) {
                f.completeExceptionally(new BlockIoException(Errno.ENODEV, "device " + name + " is unmapped"));
                return f;
            }
            if (state == State.ACTIVE) {
                f.complete(this);
                return f;
            }
            openWaiters.add(f);
        }
        kick(0);
        return f;
    }

    /** Every leg asks its server for the size and role now: how an idle device notices a move. */
    CompletableFuture<Long> refreshSize() {
        List<CompletableFuture<Long>> all = legs.stream().map(RnbdClientDevice::refreshSize).toList();
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).handle((v, t) -> size0());
    }

    public synchronized DeviceInfo info() {
        DeviceState s = switch (state) {
            case ACTIVE -> DeviceState.MAPPED;
            case UNMAPPED -> DeviceState.UNMAPPED;
            case PENDING -> anyLegFailedOnly() ? DeviceState.FAILED : DeviceState.OPENING;
            default -> DeviceState.DISCONNECTED;
        };
        String act = active == null ? "" : active.sessionName();
        return new DeviceInfo(name, act.isEmpty() ? sessions.get(0) : act, exportName, mode, size0(), s,
                claims.count(), stats.snapshot(), lastError, new HaDeviceInfo(sessions, act, activeSince,
                Math.max(0, activeGeneration), takeovers, lastStallMs, maxStallMs));
    }

    private boolean anyLegFailedOnly() {
        return legs.stream().allMatch(l -> l.state() == DeviceState.FAILED);
    }

    // ---- what the legs report

    @Override
    public void answered(RnbdClientDevice leg) {
        boolean kick = false;
        synchronized (this) {
            if (state == State.ACTIVE && leg == active && (leg.haFlags() & OpenRsp.HA_ACTIVE) == 0) {
                LOG.warn("device {}: session {} answers that its server is no longer active", name,
                        leg.sessionName());
                leave(false);
                kick = true;
            } else if (state == State.PENDING || state == State.RESOLVING) {
                kick = true;
            }
        }
        if (kick) {
            kick(0);
        }
    }

    @Override
    public void down(RnbdClientDevice leg) {
        boolean kick = false;
        synchronized (this) {
            if (state == State.ACTIVE && leg == active) {
                LOG.warn("device {}: session {} lost its server: finding the active one", name, leg.sessionName());
                leave(true);
                kick = true;
            }
        }
        if (kick) {
            kick(0);
        }
    }

    /** Under the lock: IO stops going to the active leg; a resolution follows. */
    private void leave(boolean lost) {
        left = active;
        leftGeneration = activeGeneration;
        leftLost = lost;
        active = null;
        state = State.RESOLVING;
        stallStart = nanos.getAsLong();
        retryMs = RETRY_MIN_MS;
    }

    // ---- resolution: who is active, or who takes over

    private void kick(long delayMs) {
        synchronized (this) {
            if (state == State.ACTIVE || state == State.UNMAPPED || resolving) {
                return;
            }
            if (retry != null && !retry.isDone() && delayMs > 0) {
                return;
            }
            if (retry != null) {
                retry.cancel(false);
            }
            try {
                retry = timer.schedule(this::resolve, delayMs, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException stopping) {
                retry = null;
            }
        }
    }

    private void resolve() {
        try {
            resolveNow();
        } catch (RuntimeException | Error e) {
            LOG.error("device {}: finding the active server failed", name, e);
            again();
        }
    }

    private void resolveNow() {
        RnbdClientDevice lost;
        String target;
        boolean settling;
        synchronized (this) {
            retry = null; // this run: the next one is scheduled afresh
            if (state == State.ACTIVE || state == State.UNMAPPED || resolving) {
                return;
            }
            resolving = true;
            lost = leftLost ? left : null;
            target = failbackTo;
            settling = state == State.PENDING && nanos.getAsLong() - mappedAt < TimeUnit.MILLISECONDS.toNanos(SETTLE_MS)
                    && !legs.stream().allMatch(l -> l.haFlags() != 0 || l.state() == DeviceState.FAILED);
        }
        expireHeld();
        if (lost != null) {
            lost.failOutstanding(); // what it still holds comes back to be resent once another fenced it
        }
        if (target != null) {
            RnbdClientDevice t = leg(target);
            takeOver(t);
            return;
        }
        List<RnbdClientDevice> reachable = legs.stream().filter(RnbdClientDevice::ready).toList();
        if (reachable.isEmpty()) {
            again();
            return;
        }
        List<CompletableFuture<OpenRsp>> answers = reachable.stream()
                .map(l -> l.ask(false).exceptionally(t -> null)).toList();
        CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).whenComplete((v, t) -> {
            StringBuilder heard = new StringBuilder();
            for (int i = 0; i < reachable.size(); i++) {
                OpenRsp r = answers.get(i).getNow(null);
                heard.append(i == 0 ? "" : ", ").append(reachable.get(i).sessionName()).append(' ')
                        .append(r == null ? "no answer" : ((r.haFlags() & OpenRsp.HA_ACTIVE) != 0 ? "active" : "standby")
                                + " (generation " + r.generation() + ")");
            }
            LOG.info("device {}: who is active: {}", name, heard);
            RnbdClientDevice best = null;
            long bestGen = -1;
            for (int i = 0; i < reachable.size(); i++) {
                OpenRsp r = answers.get(i).getNow(null);
                if (r != null && (r.haFlags() & OpenRsp.HA_ACTIVE) != 0 && acceptable(reachable.get(i), r.generation())
                        && r.generation() > bestGen) {
                    best = reachable.get(i);
                    bestGen = r.generation();
                }
            }
            if (best != null) {
                activate(best, bestGen, false);
                return;
            }
            if (settling) {
                again(); // at map time: give every leg its chance to say it is active first
                return;
            }
            RnbdClientDevice pick = null;
            for (int i = 0; i < reachable.size(); i++) {
                OpenRsp r = answers.get(i).getNow(null);
                if (r == null || (r.haFlags() & OpenRsp.HA_EXPORT) == 0) {
                    if (r != null) {
                        LOG.warn("device {}: export {} is not an export of several servers (ha = true) behind "
                                + "session {}: that server is left aside", name, exportName, reachable.get(i).sessionName());
                    }
                    continue;
                }
                if (pick == null || (pick == lost && reachable.get(i) != lost)) {
                    pick = reachable.get(i);
                }
            }
            if (pick == null) {
                again();
            } else {
                takeOver(pick);
            }
        });
    }

    /**
     * An ACTIVE answer counts only from a server that took the storage after the leg IO left
     * (a newer generation: it fenced that one), or from that leg itself, still holding it (IO
     * resent there goes through its own RTRS session's fence).
     */
    private synchronized boolean acceptable(RnbdClientDevice leg, long generation) {
        return generation > leftGeneration || (leg == left && generation == leftGeneration);
    }

    private RnbdClientDevice leg(String session) {
        for (RnbdClientDevice l : legs) {
            if (l.sessionName().equals(session)) {
                return l;
            }
        }
        throw new IllegalArgumentException(session);
    }

    private void takeOver(RnbdClientDevice leg) {
        LOG.info("device {}: asking the server of session {} to take {} over", name, leg.sessionName(), exportName);
        leg.ask(true).whenComplete((r, t) -> {
            if (t == null && (r.haFlags() & OpenRsp.HA_ACTIVE) != 0 && acceptable(leg, r.generation())) {
                activate(leg, r.generation(), true);
                return;
            }
            int errno = t == null ? Errno.EPROTO : BlockIoException.errnoOf(t);
            LOG.info("device {}: session {} did not take over: {}", name, leg.sessionName(),
                    t == null ? "its answer (generation " + r.generation() + ") is older than what IO left" : t.getMessage());
            List<CompletableFuture<String>> fb;
            synchronized (this) {
                lastError = errno;
                if (failbackTo != null && failbackTo.equals(leg.sessionName()) && errno != Errno.EAGAIN) {
                    failbackTo = null;
                    fb = new ArrayList<>(failbacks);
                    failbacks.clear();
                } else {
                    fb = List.of();
                }
            }
            for (CompletableFuture<String> f : fb) {
                f.completeExceptionally(new BlockIoException(errno, "session " + leg.sessionName()
                        + " did not take " + exportName + " over"));
            }
            again();
        });
    }

    private void again() {
        long delay;
        synchronized (this) {
            resolving = false;
            delay = retryMs;
            retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
        }
        kick(delay);
    }

    /** Requests that waited longer than the IO timeout for an active server fail (EIO, as with no path). */
    private void expireHeld() {
        List<Request> expired = new ArrayList<>();
        long limit = TimeUnit.MILLISECONDS.toNanos(ioTimeoutMs);
        long now = nanos.getAsLong();
        synchronized (this) {
            held.removeIf(r -> {
                if (now - r.startNanos > limit) {
                    expired.add(r);
                    return true;
                }
                return false;
            });
        }
        for (Request r : expired) {
            finish(r, Errno.EIO);
        }
    }

    private void activate(RnbdClientDevice leg, long generation, boolean tookOver) {
        List<Request> go;
        List<CompletableFuture<RemoteBlockDevice>> waiters;
        List<CompletableFuture<String>> fb = List.of();
        boolean publish;
        long stall;
        int[] attempts;
        synchronized (this) {
            resolving = false;
            if (state == State.UNMAPPED) {
                return;
            }
            boolean moved = left != null && left != leg;
            stall = state == State.RESOLVING ? TimeUnit.NANOSECONDS.toMillis(nanos.getAsLong() - stallStart) : 0;
            state = State.ACTIVE;
            active = leg;
            activeGeneration = generation;
            activeSince = wallClock.getAsLong();
            if (moved) {
                takeovers++;
            }
            if (left != null) {
                lastStallMs = stall;
                maxStallMs = Math.max(maxStallMs, stall);
            }
            left = null;
            leftLost = false;
            lastError = 0;
            retryMs = RETRY_MIN_MS;
            if (retry != null) {
                retry.cancel(false);
                retry = null;
            }
            if (failbackTo != null && failbackTo.equals(leg.sessionName())) {
                failbackTo = null;
                fb = new ArrayList<>(failbacks);
                failbacks.clear();
            }
            go = new ArrayList<>(held);
            held.clear();
            attempts = new int[go.size()];
            for (int i = 0; i < go.size(); i++) {
                attempts[i] = ++go.get(i).attempt;
            }
            publish = !published;
            published = true;
            waiters = new ArrayList<>(openWaiters);
            openWaiters.clear();
        }
        LOG.info("device {}: IO goes to session {} (generation {}{}){}", name, leg.sessionName(), generation,
                tookOver ? ", took the storage over" : ", found active",
                stall > 0 || !go.isEmpty() ? " after " + stall + " ms, " + go.size() + " requests resent" : "");
        if (publish) {
            publisher.publish(this);
        }
        waiters.forEach(w -> w.complete(this));
        fb.forEach(f -> f.complete(leg.sessionName()));
        for (int i = 0; i < go.size(); i++) {
            send(go.get(i), leg, attempts[i]);
        }
    }

    // ---- failback

    /** See {@link io.rnbd.rnbd.api.RnbdClientAdmin#failback}. */
    CompletableFuture<String> failback(String session) throws BlockIoException {
        String target = session == null || session.isBlank() ? sessions.get(0) : session.trim();
        if (!sessions.contains(target)) {
            throw new BlockIoException(Errno.EINVAL, "device " + name + " is mapped over " + sessions + ", not "
                    + target);
        }
        CompletableFuture<String> f = new CompletableFuture<>();
        synchronized (this) {
            if (state == State.UNMAPPED) {
                throw new BlockIoException(Errno.ENODEV, "device " + name + " is unmapped");
            }
            if (state == State.ACTIVE && active.sessionName().equals(target)) {
                f.complete(target);
                return f;
            }
            failbacks.add(f);
            failbackTo = target;
            if (state == State.ACTIVE) {
                // the old one answers; what it has in flight completes there, or comes back ENOLINK once fenced
                leave(false);
            }
        }
        LOG.info("device {}: failback to session {} asked", name, target);
        kick(0);
        return f;
    }

    // ---- the IO path

    private CompletableFuture<Void> submit(Request r) {
        RnbdClientDevice leg;
        int attempt;
        synchronized (this) {
            if (state == State.UNMAPPED) {
                return CompletableFuture.failedFuture(new BlockIoException(Errno.ENODEV, "device " + name
                        + " is unmapped"));
            }
            stats.started();
            if (state != State.ACTIVE) {
                held.add(r);
                leg = null;
                attempt = 0;
            } else {
                leg = active;
                attempt = ++r.attempt;
            }
        }
        if (leg == null) {
            kick(0); // the resolution's every round fails what waited longer than the IO timeout
        } else {
            send(r, leg, attempt);
        }
        return r.future;
    }

    private void send(Request r, RnbdClientDevice leg, int attempt) {
        CompletableFuture<Void> f;
        try {
            f = r.on(leg);
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(new BlockIoException(Errno.ENOTCONN, e.getMessage()));
        }
        f.whenComplete((v, t) -> done(r, leg, attempt, t));
    }

    private void done(Request r, RnbdClientDevice leg, int attempt, Throwable t) {
        if (t == null) {
            synchronized (this) {
                if (r.attempt != attempt) {
                    return; // an older attempt's late answer: the newest one counts
                }
            }
            finish(r, 0);
            return;
        }
        int errno = BlockIoException.errnoOf(t);
        boolean notActive = errno == Errno.ENOLINK;
        boolean lost = errno == Errno.ENOTCONN || errno == Errno.ESHUTDOWN || !leg.connected();
        if (!notActive && !lost) {
            synchronized (this) {
                if (r.attempt != attempt) {
                    return;
                }
            }
            finish(r, errno);
            return;
        }
        RnbdClientDevice resend = null;
        int next = 0;
        boolean kick = false;
        synchronized (this) {
            if (r.attempt != attempt || state == State.UNMAPPED) {
                return;
            }
            if (state == State.ACTIVE && active != leg) {
                // IO moved on since: the new active fenced the leg this came from
                resend = active;
                next = ++r.attempt;
            } else {
                held.add(r);
                if (state == State.ACTIVE) {
                    LOG.warn("device {}: session {} {}: finding the active server", name, leg.sessionName(),
                            notActive ? "answers that its server is not active (ENOLINK)" : "lost its server");
                    leave(lost);
                }
                kick = true;
            }
        }
        if (resend != null) {
            send(r, resend, next);
        } else if (kick) {
            kick(0);
        }
    }

    private void finish(Request r, int errno) {
        if (r.future.isDone()) {
            return;
        }
        stats.finished();
        stats.latency(nanos.getAsLong() - r.startNanos);
        if (errno == 0) {
            if (r.op == OP_READ) {
                stats.read(r.length);
            } else if (r.op == OP_WRITE) {
                stats.wrote(r.length);
            }
            r.future.complete(null);
        } else {
            stats.error();
            r.future.completeExceptionally(new BlockIoException(errno, "device " + name + " op " + r.op));
        }
    }

    // ---- unmap

    /** Unmap every leg; refused with EBUSY while requests are in flight or users hold the device, unless forced. */
    void unmap(boolean force) throws BlockIoException {
        List<Request> failed;
        List<CompletableFuture<RemoteBlockDevice>> waiters;
        List<CompletableFuture<String>> fb;
        boolean withdraw;
        synchronized (this) {
            if (state == State.UNMAPPED) {
                return;
            }
            if (!force && (stats.inflight() > 0 || claims.count() > 0)) {
                throw new BlockIoException(Errno.EBUSY, "device " + name + " in use: " + stats.inflight()
                        + " requests in flight, " + claims.describe());
            }
            state = State.UNMAPPED;
            active = null;
            failed = new ArrayList<>(held);
            held.clear();
            waiters = new ArrayList<>(openWaiters);
            openWaiters.clear();
            fb = new ArrayList<>(failbacks);
            failbacks.clear();
            if (retry != null) {
                retry.cancel(false);
            }
            withdraw = published;
        }
        for (RnbdClientDevice l : legs) {
            l.unmap(true);
        }
        failed.forEach(r -> finish(r, Errno.ENODEV));
        waiters.forEach(w -> w.completeExceptionally(new BlockIoException(Errno.ENODEV, "unmapped")));
        fb.forEach(f -> f.completeExceptionally(new BlockIoException(Errno.ENODEV, "unmapped")));
        if (withdraw) {
            publisher.withdraw(this);
        }
    }

    // ---- RemoteBlockDevice

    private void legSize(RnbdClientDevice leg, long size) {
        synchronized (this) {
            if (leg != active) {
                return;
            }
        }
        sizeListeners.forEach(l -> l.accept(size));
    }

    /** The geometry of the active leg, else of any leg that has been opened. */
    private RnbdClientDevice geometrySource() {
        synchronized (this) {
            if (active != null) {
                return active;
            }
        }
        for (RnbdClientDevice l : legs) {
            if (l.knownSize() > 0) {
                return l;
            }
        }
        throw new IllegalStateException("device " + name + " has not been opened yet");
    }

    private long size0() {
        try {
            return geometrySource().knownSize();
        } catch (IllegalStateException e) {
            return 0;
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String exportName() {
        return exportName;
    }

    /** The session IO goes to now (the first one while none is active). */
    @Override
    public synchronized String sessionName() {
        return active == null ? sessions.get(0) : active.sessionName();
    }

    public List<String> sessionNames() {
        return sessions;
    }

    @Override
    public AccessMode accessMode() {
        return mode;
    }

    @Override
    public long size() {
        return geometrySource().size();
    }

    @Override
    public int logicalBlockSize() {
        return geometrySource().logicalBlockSize();
    }

    @Override
    public int physicalBlockSize() {
        return geometrySource().physicalBlockSize();
    }

    @Override
    public int maxIoSize() {
        return geometrySource().maxIoSize();
    }

    @Override
    public Capabilities capabilities() {
        return geometrySource().capabilities();
    }

    @Override
    public SizeWatch watchSize(LongConsumer listener) {
        sizeListeners.add(listener);
        return () -> sizeListeners.remove(listener);
    }

    @Override
    public DeviceClaim claim(String user) {
        return claims.claim(user);
    }

    @Override
    public BlockPlug plug() {
        RnbdClientDevice leg;
        synchronized (this) {
            leg = state == State.ACTIVE ? active : null;
        }
        return leg == null ? BlockPlug.NONE : leg.plug();
    }

    /** The mapping belongs to the client: users release their claims, the admin unmaps. */
    @Override
    public void close() {
    }

    @Override
    public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
        return submit(new Request(OP_READ, offset, dst.remaining(), dst, false));
    }

    @Override
    public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
        return submit(new Request(OP_WRITE, offset, src.remaining(), src, fua));
    }

    @Override
    public CompletableFuture<Void> flush() {
        return submit(new Request(OP_FLUSH, 0, 0, null, false));
    }

    @Override
    public CompletableFuture<Void> trim(long offset, long length) {
        return submit(new Request(OP_TRIM, offset, length, null, false));
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
        return submit(new Request(OP_ZEROES, offset, length, null, fua));
    }
}

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
import io.rnbd.rnbd.api.SizeWatch;
import io.rnbd.rnbd.proto.Close;
import io.rnbd.rnbd.proto.Open;
import io.rnbd.rnbd.proto.OpenRsp;
import io.rnbd.rnbd.proto.ProtoException;
import io.rnbd.rtrs.api.RtrsClientSession;
import io.rnbd.rtrs.api.RtrsPlug;
import io.rnbd.rtrs.api.SessionState;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One mapped device (the kernel's rnbd_clt_dev): its map/open lifecycle over one table of
 * states, and the {@link RemoteBlockDevice} it is to its users. Requests are split to the
 * device's limits by its {@link DeviceIo} and sent over the session; while an OPEN is
 * outstanding they wait here, so they never go out with a device id the server no longer
 * knows.
 */
public final class RnbdClientDevice implements RemoteBlockDevice {
    /** Also the IO path's ({@link Piece}): one category for everything a device logs. */
    static final Logger LOG = LoggerFactory.getLogger(RnbdClientDevice.class);
    private static final Map<DeviceState, Set<DeviceState>> MOVES = new EnumMap<>(Map.of(
            DeviceState.PENDING, EnumSet.of(DeviceState.OPENING, DeviceState.UNMAPPED),
            DeviceState.OPENING, EnumSet.of(DeviceState.MAPPED, DeviceState.FAILED, DeviceState.DISCONNECTED,
                    DeviceState.PENDING, DeviceState.UNMAPPED),
            DeviceState.MAPPED, EnumSet.of(DeviceState.OPENING, DeviceState.FAILED, DeviceState.DISCONNECTED,
                    DeviceState.PENDING, DeviceState.UNMAPPED),
            DeviceState.DISCONNECTED, EnumSet.of(DeviceState.OPENING, DeviceState.PENDING, DeviceState.UNMAPPED),
            DeviceState.FAILED, EnumSet.of(DeviceState.OPENING, DeviceState.DISCONNECTED, DeviceState.PENDING,
                    DeviceState.UNMAPPED),
            DeviceState.UNMAPPED, EnumSet.noneOf(DeviceState.class)));

    private final String name;
    private final String sessionName;
    private final String exportName;
    private final AccessMode mode;
    private final DevicePublisher publisher;
    private final BlockStats stats = new BlockStats();
    private final Claims claims = new Claims();
    private final DeviceIo io;
    private final ArrayDeque<Piece> held = new ArrayDeque<>();
    private final List<CompletableFuture<RemoteBlockDevice>> openWaiters = new ArrayList<>();
    private final SizeRefresh sizes = new SizeRefresh(this);
    private DeviceState state = DeviceState.PENDING;
    private RnbdClientSession session;
    private DeviceGeometry geometry;
    private int lastError;
    /** OPENs the server refused in a row since the device was last MAPPED. */
    private int refusals;
    /** Told when the server's refusal moves the device to FAILED (the client's retry: {@link RemapPolicy}). */
    private volatile Refused onRefused = (d, errno, times) -> { };
    private boolean published;
    /** Set when this device is one leg of a device over several servers ({@link RnbdHaDevice}). */
    private volatile Leg owner;
    /** The last OPEN_RSP's several-servers fields: role flags and the holder's generation. */
    private volatile int haFlags;
    private volatile long generation;

    /** Hears that the server refused to open the device: its errno, and how many times in a row. */
    interface Refused {
        void refused(RnbdClientDevice device, int errno, int times);
    }

    void onRefused(Refused r) {
        this.onRefused = r;
    }

    /** What a device over several servers hears from each of its legs. */
    interface Leg {
        /** An OPEN of the leg was answered (a map, remap, refresh or takeover): its role may have changed. */
        void answered(RnbdClientDevice leg);

        /** The leg's session lost its paths or went away: requests on it wait or fail. */
        void down(RnbdClientDevice leg);
    }

    public RnbdClientDevice(String name, String sessionName, String exportName, AccessMode mode,
                            DevicePublisher publisher) {
        new Open(mode, exportName); // validates the export name as the wire needs it
        this.name = name;
        this.sessionName = sessionName;
        this.exportName = exportName;
        this.mode = mode;
        this.publisher = publisher;
        this.io = new DeviceIo(this, stats);
    }

    /** Make this device a leg of {@code owner}: its OPENs carry F_LEG and their answers go to the owner. */
    void legOf(Leg leg) {
        this.owner = leg;
    }

    /** The OPEN this device sends: Linux's, or with the several-servers flags to an appliance server. */
    Open openMsg(boolean takeover) {
        RnbdClientSession s;
        synchronized (this) {
            s = session;
        }
        int flags = owner == null || s == null || !s.ha() ? 0 : Open.F_LEG | (takeover ? Open.F_TAKEOVER : 0);
        return new Open(mode, exportName, flags);
    }

    /** The last answer's role flags ({@link OpenRsp#HA_EXPORT}, {@link OpenRsp#HA_ACTIVE}); 0 from a server of its own. */
    int haFlags() {
        return haFlags;
    }

    long generation() {
        return generation;
    }

    /** Whether an OPEN can go now: a session that finished its SESS_INFO. */
    synchronized boolean ready() {
        return session != null && session.ready() && state != DeviceState.UNMAPPED;
    }

    /** Whether the leg's session has a path: what it answers is the server's. */
    synchronized boolean connected() {
        return session != null && session.rtrs().state() == SessionState.CONNECTED;
    }

    /**
     * Ask the server now (an OPEN of the open export, as a size refresh does), with the takeover
     * flag or not: completes with the answer once the device adopted it, or fails with the errno.
     */
    CompletableFuture<OpenRsp> ask(boolean takeover) {
        RtrsClientSession rtrs;
        Open msg = openMsg(takeover);
        boolean wasMapped;
        synchronized (this) {
            if (session == null || !session.ready() || state == DeviceState.UNMAPPED) {
                return CompletableFuture.failedFuture(new BlockIoException(Errno.ENOTCONN, "device " + name
                        + ": session " + sessionName + " is not connected"));
            }
            rtrs = session.rtrs();
            wasMapped = state == DeviceState.MAPPED;
            if (state != DeviceState.MAPPED && state != DeviceState.OPENING) {
                moveTo(DeviceState.OPENING);
            }
        }
        CompletableFuture<OpenRsp> f = new CompletableFuture<>();
        ByteBuffer rsp = ByteBuffer.allocate(OpenRsp.SIZE);
        rtrs.read(msg.toBuffer(), rsp, errno -> {
            try {
                // a refused takeover (EBUSY, EAGAIN) says nothing about a mapping that stands, as a refresh's failure does not
                if (errno == 0 || !wasMapped) {
                    opened(rtrs, errno, rsp);
                }
            } catch (RuntimeException e) {
                LOG.error("device {}: adopting an OPEN answer failed", name, e);
            }
            if (errno != 0) {
                f.completeExceptionally(new BlockIoException(errno, "OPEN of " + exportName + " over " + sessionName));
                return;
            }
            try {
                f.complete(OpenRsp.decode(rsp.duplicate().clear()));
            } catch (ProtoException e) {
                f.completeExceptionally(new BlockIoException(Errno.EPROTO, e.getMessage()));
            }
        });
        return f;
    }

    /**
     * The device over several servers moves off this leg: requests held here and those its
     * transport keeps for a path come back now (ENOTCONN), so that they can be sent to another
     * server once that one has fenced this one.
     */
    void failOutstanding() {
        List<Piece> failed;
        RtrsClientSession rtrs;
        synchronized (this) {
            failed = take(held);
            rtrs = session == null ? null : session.rtrs();
        }
        failed.forEach(p -> p.finish(Errno.ENOTCONN));
        if (rtrs != null) {
            rtrs.failOutstanding(Errno.ENOTCONN);
        }
    }

    private void moveTo(DeviceState to) {
        if (!MOVES.get(state).contains(to)) {
            throw new IllegalStateException("device " + name + ": " + state + " -> " + to + " not allowed");
        }
        LOG.info("device {}: {} -> {}", name, state, to);
        state = to;
    }

    // ---- lifecycle, driven by the session and the admin ----

    synchronized void attach(RnbdClientSession s) {
        session = s;
    }

    /** The session service is gone: nothing can flow until another appears. */
    void detach() {
        synchronized (this) {
            session = null;
        }
        lost();
        Leg o = owner;
        if (o != null) {
            o.down(this);
        }
    }

    /** The session closed or failed for good: requests fail until it (or another) connects. */
    void lost() {
        List<Piece> failed;
        synchronized (this) {
            if (state == DeviceState.UNMAPPED || state == DeviceState.PENDING) {
                return;
            }
            moveTo(DeviceState.PENDING);
            failed = take(held);
        }
        failed.forEach(p -> p.finish(Errno.ENOTCONN));
        Leg o = owner;
        if (o != null) {
            o.down(this);
        }
    }

    /** All paths are down: requests go to the transport, which waits or fails them. */
    void disconnected() {
        List<Piece> release;
        synchronized (this) {
            if (state != DeviceState.MAPPED && state != DeviceState.OPENING) {
                return;
            }
            moveTo(DeviceState.DISCONNECTED);
            release = take(held);
        }
        release.forEach(this::submit);
        Leg o = owner;
        if (o != null) {
            o.down(this);
        }
    }

    /**
     * Send OPEN (first map, remap after reconnect, refresh of the size). A MAPPED device
     * stays MAPPED meanwhile: same session, same id.
     */
    CompletableFuture<RemoteBlockDevice> open() {
        CompletableFuture<RemoteBlockDevice> f = new CompletableFuture<>();
        RtrsClientSession rtrs;
        synchronized (this) {
            if (state == DeviceState.UNMAPPED) {
                f.completeExceptionally(new BlockIoException(Errno.ENODEV, "device " + name + " is unmapped"));
                return f;
            }
            openWaiters.add(f);
            if (session == null || !session.ready()) {
                return f;
            }
            rtrs = session.rtrs();
            if (state != DeviceState.MAPPED && state != DeviceState.OPENING) {
                moveTo(DeviceState.OPENING);
            }
        }
        ByteBuffer rsp = ByteBuffer.allocate(OpenRsp.SIZE);
        rtrs.read(openMsg(false).toBuffer(), rsp, errno -> opened(rtrs, errno, rsp));
        return f;
    }

    /** Ask the server for the export's size now and adopt it: see {@link SizeRefresh#refresh}. */
    public CompletableFuture<Long> refreshSize() {
        return sizes.refresh();
    }

    /** The session's transport to refresh the size over: only a MAPPED device of a ready session has one. */
    synchronized RtrsClientSession refreshable() {
        return state != DeviceState.MAPPED || session == null || !session.ready() ? null : session.rtrs();
    }

    synchronized long knownSize() {
        return geometry == null ? 0L : geometry.size();
    }

    @Override
    public SizeWatch watchSize(LongConsumer listener) {
        return sizes.watch(listener);
    }

    /** The answer to an OPEN (a map, a remap or a size refresh). */
    void opened(RtrsClientSession rtrs, int errno, ByteBuffer rsp) {
        DeviceGeometry g = null;
        if (errno == 0) {
            try {
                OpenRsp r = OpenRsp.decode(rsp.duplicate());
                haFlags = r.haFlags();
                generation = r.generation();
                if (r.unknownCachePolicyBits() != 0) {
                    // a newer server's: ignored as Linux's client ignores them, and counted
                    stats.unknown();
                    LOG.debug("device {}: OPEN_RSP cache_policy bits {} unknown here, ignored", name,
                            Integer.toHexString(r.unknownCachePolicyBits()));
                }
                g = DeviceGeometry.of(r, rtrs.maxIoSize(), mode);
                if (g.maxIoSize() < g.logicalBlockSize()) {
                    errno = Errno.EPROTO;
                }
            } catch (ProtoException e) {
                LOG.warn("device {}: bad OPEN_RSP: {}", name, e.getMessage());
                errno = Errno.EPROTO;
            }
        }
        List<Piece> release = List.of();
        List<Piece> failed = List.of();
        List<CompletableFuture<RemoteBlockDevice>> waiters;
        boolean publish = false;
        boolean closeOrphan = false;
        long oldSize = -1;
        boolean unchanged = false;
        boolean late = false;
        int refusedTimes = 0;
        synchronized (this) {
            if (state == DeviceState.UNMAPPED) {
                closeOrphan = errno == 0;
                waiters = List.of();
            } else if (errno == 0 && state == DeviceState.DISCONNECTED) {
                // the answer of a connection that is gone (a refresh or a takeover question in
                // flight when the paths went): the remap on reconnect answers anew
                late = true;
                waiters = List.of();
            } else if (errno == 0) {
                oldSize = geometry == null ? -1 : geometry.size();
                unchanged = state == DeviceState.MAPPED && geometry != null && geometry.deviceId() == g.deviceId();
                geometry = g;
                lastError = 0;
                refusals = 0;
                if (state != DeviceState.MAPPED) {
                    moveTo(DeviceState.MAPPED);
                }
                publish = !published;
                published = true;
                release = take(held);
                waiters = take(openWaiters);
            } else if (rtrs.state() != SessionState.CONNECTED) {
                // The transport failed the OPEN: remapped on the next CONNECTED.
                if (state == DeviceState.OPENING || state == DeviceState.MAPPED) {
                    moveTo(DeviceState.DISCONNECTED);
                }
                release = take(held);
                waiters = List.of();
            } else {
                lastError = errno;
                if (state != DeviceState.FAILED) {
                    // Two OPENs may be out at once (attach racing the handshake): fail once.
                    moveTo(DeviceState.FAILED);
                    refusedTimes = ++refusals;
                }
                waiters = take(openWaiters);
                failed = take(held);
            }
        }
        if (closeOrphan) {
            rtrs.write(new Close(g.deviceId()).toBuffer(), DeviceIo.NO_DATA, e -> { });
            return;
        }
        if (late) {
            LOG.debug("device {}: an OPEN answered after its session lost its paths: ignored", name);
            return;
        }
        if (errno == 0 && oldSize >= 0 && oldSize != g.size()) {
            // as Linux's rnbd_clt_change_capacity: the same device, another size; no remap
            LOG.info("device {}: size changed from {} to {} bytes", name, oldSize, g.size());
            sizes.changed(g.size());
        } else if (errno == 0 && unchanged) {
            // the periodic size refresh (size.refresh.ms) of a mapped device: nothing happened
            LOG.debug("device {}: export {} still open as id {}, {} bytes", name, exportName, g.deviceId(), g.size());
        } else if (errno == 0) {
            LOG.info("device {}: export {} open as id {}, {} bytes", name, exportName, g.deviceId(), g.size());
        } else {
            LOG.warn("device {}: OPEN of export {} failed: {}", name, exportName, Errno.name(errno));
        }
        if (publish) {
            publisher.publish(this);
        }
        Leg o = owner;
        if (o != null) {
            o.answered(this);
        }
        release.forEach(this::submit);
        for (Piece p : failed) {
            p.finish(errno);
        }
        for (CompletableFuture<RemoteBlockDevice> w : waiters) {
            if (errno == 0) {
                w.complete(this);
            } else {
                w.completeExceptionally(new BlockIoException(errno, "open of export " + exportName + " failed"));
            }
        }
        if (refusedTimes > 0) {
            onRefused.refused(this, errno, refusedTimes);
        }
    }

    /**
     * Unmap: refused with EBUSY while requests are in flight or users hold the device,
     * unless {@code force}. Sends CLOSE when the server has the device open.
     */
    void unmap(boolean force) throws BlockIoException {
        List<Piece> failed;
        List<CompletableFuture<RemoteBlockDevice>> waiters;
        RtrsClientSession rtrs = null;
        DeviceGeometry g;
        boolean withdraw;
        synchronized (this) {
            if (state == DeviceState.UNMAPPED) {
                return;
            }
            if (!force && (stats.inflight() > 0 || claims.count() > 0)) {
                throw new BlockIoException(Errno.EBUSY, "device " + name + " in use: " + stats.inflight()
                        + " requests in flight, " + claims.describe());
            }
            if (state == DeviceState.MAPPED && session != null) {
                rtrs = session.rtrs();
            }
            g = geometry;
            moveTo(DeviceState.UNMAPPED);
            failed = take(held);
            waiters = take(openWaiters);
            withdraw = published;
        }
        failed.forEach(p -> p.finish(Errno.ENODEV));
        waiters.forEach(w -> w.completeExceptionally(new BlockIoException(Errno.ENODEV, "unmapped")));
        if (rtrs != null && g != null) {
            rtrs.write(new Close(g.deviceId()).toBuffer(), DeviceIo.NO_DATA, e -> {
                if (e != 0) {
                    LOG.debug("device {}: CLOSE answered {}", name, Errno.name(e));
                }
            });
        }
        if (withdraw) {
            publisher.withdraw(this);
        }
    }

    /** Empty the held pieces or the OPEN's waiters, to act on them outside the lock. */
    private static <T> List<T> take(Collection<T> waiting) {
        List<T> l = new ArrayList<>(waiting);
        waiting.clear();
        return l;
    }

    // ---- RemoteBlockDevice ----

    @Override
    public String name() {
        return name;
    }

    @Override
    public String exportName() {
        return exportName;
    }

    @Override
    public String sessionName() {
        return sessionName;
    }

    @Override
    public AccessMode accessMode() {
        return mode;
    }

    public synchronized DeviceState state() {
        return state;
    }

    synchronized DeviceGeometry geometry() {
        if (geometry == null) {
            throw new IllegalStateException("device " + name + " has not been opened yet");
        }
        return geometry;
    }

    @Override
    public long size() {
        return geometry().size();
    }

    @Override
    public int logicalBlockSize() {
        return geometry().logicalBlockSize();
    }

    @Override
    public int physicalBlockSize() {
        return geometry().physicalBlockSize();
    }

    @Override
    public int maxIoSize() {
        return geometry().maxIoSize();
    }

    @Override
    public Capabilities capabilities() {
        return geometry().caps();
    }

    @Override
    public DeviceClaim claim(String user) {
        return claims.claim(user);
    }

    /** The mapping belongs to the client: users release their claims, the admin unmaps. */
    @Override
    public void close() {
    }

    public synchronized DeviceInfo info() {
        return new DeviceInfo(name, sessionName, exportName, mode, geometry == null ? 0 : geometry.size(), state,
                claims.count(), stats.snapshot(), lastError);
    }

    // ---- the IO path (DeviceIo cuts, Piece goes on the wire; the state decides where) ----

    @Override
    public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
        return io.read(offset, dst);
    }

    @Override
    public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
        return io.write(offset, src, fua);
    }

    @Override
    public CompletableFuture<Void> flush() {
        return io.flush();
    }

    @Override
    public CompletableFuture<Void> trim(long offset, long length) {
        return io.trim(offset, length);
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
        return io.writeZeroes(offset, length, fua, false);
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua, boolean noUnmap) {
        return io.writeZeroes(offset, length, fua, noUnmap);
    }

    @Override
    public CompletableFuture<Void> secureErase(long offset, long length) {
        return io.secureErase(offset, length);
    }

    /** The RTRS session's plug: what this thread submits then goes out as one post per connection. */
    @Override
    public BlockPlug plug() {
        RtrsClientSession rtrs;
        synchronized (this) {
            rtrs = state == DeviceState.MAPPED && session != null ? session.rtrs() : null;
        }
        if (rtrs == null) {
            return BlockPlug.NONE;
        }
        RtrsPlug p = rtrs.plug();
        return p == RtrsPlug.NONE ? BlockPlug.NONE : p::close;
    }

    /**
     * Count a request of {@code pieces} in flight, under the lock unmap checks; false when the
     * device is unmapped. A request of no pieces is not counted.
     */
    synchronized boolean admit(int pieces) {
        if (state == DeviceState.UNMAPPED) {
            return false;
        }
        if (pieces > 0) {
            stats.started();
        }
        return true;
    }

    /** Send a piece now, hold it until the OPEN completes, or fail it. */
    void submit(Piece p) {
        RtrsClientSession rtrs = null;
        int id = 0;
        int errno;
        synchronized (this) {
            if (state == DeviceState.OPENING || (p.resends > 0 && state == DeviceState.DISCONNECTED)) {
                // An OPEN is out, or the server no longer knows the id: wait for the remap.
                held.add(p);
                return;
            }
            switch (state) {
                case MAPPED:
                case DISCONNECTED:
                    rtrs = session == null ? null : session.rtrs();
                    id = geometry.deviceId();
                    errno = rtrs == null ? Errno.ENOTCONN : 0;
                    break;
                case FAILED:
                    errno = lastError;
                    break;
                case PENDING:
                    errno = Errno.ENOTCONN;
                    break;
                default:
                    errno = Errno.ENODEV;
            }
        }
        if (errno != 0) {
            p.finish(errno);
            return;
        }
        p.send(rtrs, id);
    }

    /** What a piece answered ENXIO does next ({@link #onEnxio}). */
    enum AfterEnxio { RESEND, REOPENED, FAIL }

    /**
     * A piece was answered ENXIO: decide, in one step under the lock, whether it goes again
     * (a remap is due or under way, or done with a new id: the server answered a reconnected
     * session that has not re-opened yet), whether it starts the remap (ENXIO for the current
     * id of a MAPPED device: the server forgot the open while the session stayed up, its RNBD
     * layer restarted or an operator force-closed it; Linux's client re-opens its devices when
     * its session comes back), or fails. One step because the pieces of one burst are answered
     * on several paths' threads at once: checked apart, a second piece could see the device
     * MAPPED (not stale) and then OPENING (not its to reopen), and fail with ENXIO. If the
     * server refuses the new OPEN (export removed, access revoked), the device fails with that
     * errno and so do the held pieces.
     */
    AfterEnxio onEnxio(Piece p) {
        synchronized (this) {
            if (state == DeviceState.OPENING || state == DeviceState.DISCONNECTED
                    || (state == DeviceState.MAPPED && geometry.deviceId() != p.sentWith)) {
                return AfterEnxio.RESEND;
            }
            if (state != DeviceState.MAPPED) {
                return AfterEnxio.FAIL;
            }
            LOG.warn("device {}: the server no longer knows device id {} (restarted or force-closed): opening export {} "
                    + "again", name, p.sentWith, exportName);
            moveTo(DeviceState.OPENING);
            held.add(p);
        }
        open();
        return AfterEnxio.REOPENED;
    }
}

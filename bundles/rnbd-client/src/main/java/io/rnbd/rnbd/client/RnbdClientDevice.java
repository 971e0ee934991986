package io.rnbd.rnbd.client;

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
import io.rnbd.rnbd.proto.Io;
import io.rnbd.rnbd.proto.Open;
import io.rnbd.rnbd.proto.OpenRsp;
import io.rnbd.rnbd.proto.ProtoException;
import io.rnbd.rtrs.api.RtrsClientSession;
import io.rnbd.rtrs.api.RtrsPlug;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongConsumer;
import java.util.function.ToIntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One mapped device (the kernel's rnbd_clt_dev). Requests are split to the device's
 * limits and sent over the session; while an OPEN is outstanding they wait here, so they
 * never go out with a device id the server no longer knows.
 */
public final class RnbdClientDevice implements RemoteBlockDevice {
    private static final Logger LOG = LoggerFactory.getLogger(RnbdClientDevice.class);
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
    /** A request that met a stale device id is sent again after the remap, at most this often. */
    private static final int MAX_RESENDS = 3;
    private static final ByteBuffer NO_DATA = ByteBuffer.allocate(0).asReadOnlyBuffer();

    private final String name;
    private final String sessionName;
    private final String exportName;
    private final AccessMode mode;
    private final DevicePublisher publisher;
    private final BlockStats stats = new BlockStats();
    /** Holders of claims by name, with how many claims each holds (guarded by this). */
    private final Map<String, Integer> users = new java.util.TreeMap<>();
    private int userCount;
    private final ArrayDeque<Piece> held = new ArrayDeque<>();
    private final List<CompletableFuture<RemoteBlockDevice>> openWaiters = new ArrayList<>();
    private final List<LongConsumer> sizeListeners = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** The refresh OPEN out now, if any: callers asking meanwhile share its answer. */
    private CompletableFuture<Long> refreshing;
    private DeviceState state = DeviceState.PENDING;
    private RnbdClientSession session;
    private DeviceGeometry geometry;
    private int lastError;
    private boolean published;

    public RnbdClientDevice(String name, String sessionName, String exportName, AccessMode mode,
                            DevicePublisher publisher) {
        new Open(mode, exportName); // validates the export name as the wire needs it
        this.name = name;
        this.sessionName = sessionName;
        this.exportName = exportName;
        this.mode = mode;
        this.publisher = publisher;
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
    }

    /** The session closed or failed for good: requests fail until it (or another) connects. */
    void lost() {
        List<Piece> failed;
        synchronized (this) {
            if (state == DeviceState.UNMAPPED || state == DeviceState.PENDING) {
                return;
            }
            moveTo(DeviceState.PENDING);
            failed = takeHeld();
        }
        failed.forEach(p -> p.finish(Errno.ENOTCONN));
    }

    /** All paths are down: requests go to the transport, which waits or fails them. */
    void disconnected() {
        List<Piece> release;
        synchronized (this) {
            if (state != DeviceState.MAPPED && state != DeviceState.OPENING) {
                return;
            }
            moveTo(DeviceState.DISCONNECTED);
            release = takeHeld();
        }
        release.forEach(this::submit);
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
        rtrs.read(new Open(mode, exportName).toBuffer(), rsp, errno -> opened(rtrs, errno, rsp));
        return f;
    }

    /**
     * Ask the server for the export's size now and adopt it: an OPEN of the export this
     * session has open already, which Linux's rnbd-server and ours answer with the same device
     * id and the device's current size (docs/protocol.md, "Resize"). Unlike {@link #open()},
     * a failure leaves a MAPPED device as it is: a refresh that did not get through says
     * nothing about the mapping, and IO finds out for itself. Completes with the size known
     * afterwards; only a MAPPED device refreshes, others complete with the size they know.
     */
    public CompletableFuture<Long> refreshSize() {
        RtrsClientSession rtrs;
        CompletableFuture<Long> f;
        synchronized (this) {
            if (state != DeviceState.MAPPED || session == null || !session.ready()) {
                return CompletableFuture.completedFuture(geometry == null ? 0L : geometry.size());
            }
            if (refreshing != null) {
                return refreshing;
            }
            refreshing = f = new CompletableFuture<>();
            rtrs = session.rtrs();
        }
        ByteBuffer rsp = ByteBuffer.allocate(OpenRsp.SIZE);
        rtrs.read(new Open(mode, exportName).toBuffer(), rsp, errno -> {
            synchronized (this) {
                refreshing = null;
            }
            if (errno == 0) {
                opened(rtrs, 0, rsp);
            } else {
                LOG.debug("device {}: size refresh answered {}", name, Errno.name(errno));
            }
            synchronized (this) {
                f.complete(geometry == null ? 0L : geometry.size());
            }
        });
        return f;
    }

    @Override
    public SizeWatch watchSize(LongConsumer listener) {
        sizeListeners.add(listener);
        return () -> sizeListeners.remove(listener);
    }

    private void opened(RtrsClientSession rtrs, int errno, ByteBuffer rsp) {
        DeviceGeometry g = null;
        if (errno == 0) {
            try {
                g = DeviceGeometry.of(OpenRsp.decode(rsp), rtrs.maxIoSize(), mode);
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
        synchronized (this) {
            if (state == DeviceState.UNMAPPED) {
                closeOrphan = errno == 0;
                waiters = List.of();
            } else if (errno == 0) {
                oldSize = geometry == null ? -1 : geometry.size();
                geometry = g;
                lastError = 0;
                if (state != DeviceState.MAPPED) {
                    moveTo(DeviceState.MAPPED);
                }
                publish = !published;
                published = true;
                release = takeHeld();
                waiters = takeOpenWaiters();
            } else if (rtrs.state() != io.rnbd.rtrs.api.SessionState.CONNECTED) {
                // The transport failed the OPEN: remapped on the next CONNECTED.
                if (state == DeviceState.OPENING || state == DeviceState.MAPPED) {
                    moveTo(DeviceState.DISCONNECTED);
                }
                release = takeHeld();
                waiters = List.of();
            } else {
                lastError = errno;
                if (state != DeviceState.FAILED) {
                    // Two OPENs may be out at once (attach racing the handshake): fail once.
                    moveTo(DeviceState.FAILED);
                }
                waiters = takeOpenWaiters();
                failed = takeHeld();
            }
        }
        if (closeOrphan) {
            rtrs.write(new Close(g.deviceId()).toBuffer(), NO_DATA, e -> { });
            return;
        }
        if (errno == 0 && oldSize >= 0 && oldSize != g.size()) {
            // as Linux's rnbd_clt_change_capacity: the same device, another size; no remap
            LOG.info("device {}: size changed from {} to {} bytes", name, oldSize, g.size());
            for (LongConsumer l : sizeListeners) {
                l.accept(g.size());
            }
        } else if (errno == 0) {
            LOG.info("device {}: export {} open as id {}, {} bytes", name, exportName, g.deviceId(), g.size());
        } else {
            LOG.warn("device {}: OPEN of export {} failed: {}", name, exportName, Errno.name(errno));
        }
        if (publish) {
            publisher.publish(this);
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
            if (!force && (stats.inflight() > 0 || userCount > 0)) {
                throw new BlockIoException(Errno.EBUSY, "device " + name + " in use: " + stats.inflight()
                        + " requests in flight, " + userCount + (userCount == 1 ? " user" : " users")
                        + (userCount == 0 ? "" : " (" + userNames() + ")"));
            }
            if (state == DeviceState.MAPPED && session != null) {
                rtrs = session.rtrs();
            }
            g = geometry;
            moveTo(DeviceState.UNMAPPED);
            failed = takeHeld();
            waiters = takeOpenWaiters();
            withdraw = published;
        }
        failed.forEach(p -> p.finish(Errno.ENODEV));
        waiters.forEach(w -> w.completeExceptionally(new BlockIoException(Errno.ENODEV, "unmapped")));
        if (rtrs != null && g != null) {
            rtrs.write(new Close(g.deviceId()).toBuffer(), NO_DATA, e -> {
                if (e != 0) {
                    LOG.debug("device {}: CLOSE answered {}", name, Errno.name(e));
                }
            });
        }
        if (withdraw) {
            publisher.withdraw(this);
        }
    }

    private List<Piece> takeHeld() {
        List<Piece> l = new ArrayList<>(held);
        held.clear();
        return l;
    }

    private List<CompletableFuture<RemoteBlockDevice>> takeOpenWaiters() {
        List<CompletableFuture<RemoteBlockDevice>> l = new ArrayList<>(openWaiters);
        openWaiters.clear();
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

    private synchronized DeviceGeometry geometry() {
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
        String who = user == null || user.isBlank() ? "unnamed" : user;
        synchronized (this) {
            users.merge(who, 1, Integer::sum);
            userCount++;
        }
        AtomicBoolean released = new AtomicBoolean();
        return () -> {
            if (released.compareAndSet(false, true)) {
                synchronized (this) {
                    users.computeIfPresent(who, (k, n) -> n == 1 ? null : n - 1);
                    userCount--;
                }
            }
        };
    }

    /** The holders, for the one line that refuses an unmap: a few names, then how many more. */
    private String userNames() {
        StringBuilder sb = new StringBuilder();
        int shown = 0;
        for (Map.Entry<String, Integer> e : users.entrySet()) {
            if (shown == 4) {
                sb.append(", and ").append(users.size() - shown).append(" more");
                break;
            }
            sb.append(shown++ == 0 ? "" : ", ").append(e.getKey());
            if (e.getValue() > 1) {
                sb.append(" x").append(e.getValue());
            }
        }
        return sb.toString();
    }

    /** The mapping belongs to the client: users release their claims, the admin unmaps. */
    @Override
    public void close() {
    }

    public synchronized DeviceInfo info() {
        return new DeviceInfo(name, sessionName, exportName, mode, geometry == null ? 0 : geometry.size(), state,
                userCount, stats.snapshot(), lastError);
    }

    BlockStats stats() {
        return stats;
    }

    @Override
    public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
        return split(Io.OP_READ, 0, offset, dst.remaining(), dst, g -> g.maxIoSize());
    }

    @Override
    public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
        return split(Io.OP_WRITE, fua ? Io.F_FUA : 0, offset, src.remaining(), src, g -> g.maxIoSize());
    }

    @Override
    public CompletableFuture<Void> flush() {
        Request r = start(Io.OP_FLUSH, 1, 0);
        if (!r.future.isDone()) {
            submit(new Piece(r, Io.OP_FLUSH, 0, 0, 0, NO_DATA));
        }
        return r.future;
    }

    @Override
    public CompletableFuture<Void> trim(long offset, long length) {
        DeviceGeometry g = geometry();
        if (!g.caps().trim()) {
            return failed(Errno.EOPNOTSUPP, "device " + name + " cannot discard");
        }
        return split(Io.OP_DISCARD, 0, offset, length, null, DeviceGeometry::maxDiscardBytes);
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
        DeviceGeometry g = geometry();
        if (g.caps().write() && !g.caps().zero()) {
            // The server offers no WRITE_ZEROES: write zeros, one maximal buffer reused read-only.
            ByteBuffer zeros = ByteBuffer.allocate((int) Math.min(length, g.maxIoSize())).asReadOnlyBuffer();
            return split(Io.OP_WRITE, fua ? Io.F_FUA : 0, offset, length, zeros, DeviceGeometry::maxIoSize);
        }
        return split(Io.OP_WRITE_ZEROES, fua ? Io.F_FUA : 0, offset, length, null,
                DeviceGeometry::maxWriteZeroesBytes);
    }

    private static CompletableFuture<Void> failed(int errno, String msg) {
        return CompletableFuture.failedFuture(new BlockIoException(errno, msg));
    }

    /**
     * Check and cut one request into pieces of at most {@code max} bytes. For data ops each
     * piece is a slice of {@code buf}; a shorter {@code buf} (the zero buffer) is reused.
     */
    private CompletableFuture<Void> split(int op, int flags, long offset, long length, ByteBuffer buf,
                                          ToIntFunction<DeviceGeometry> max) {
        return split(op, flags, offset, length, buf, max, true);
    }

    private CompletableFuture<Void> split(int op, int flags, long offset, long length, ByteBuffer buf,
                                          ToIntFunction<DeviceGeometry> max, boolean mayRefresh) {
        DeviceGeometry g = geometry();
        boolean write = op != Io.OP_READ;
        if (write && !g.caps().write()) {
            return failed(Errno.EROFS, "device " + name + " is mapped read-only");
        }
        int lbs = g.logicalBlockSize();
        if (offset < 0 || length < 0 || offset % lbs != 0 || length % lbs != 0) {
            return failed(Errno.EINVAL, "request " + offset + "+" + length + " misaligned to " + lbs);
        }
        if (offset > g.size() - length) {
            if (mayRefresh && state() == DeviceState.MAPPED) {
                // The export may have grown since the last OPEN: ask once before refusing, so
                // IO beyond the old end works as soon as the server has the new size.
                return refreshSize().thenCompose(size -> split(op, flags, offset, length, buf, max, false));
            }
            return failed(Errno.EINVAL, "request " + offset + "+" + length + " beyond " + g.size());
        }
        int step = max.applyAsInt(g);
        int n = (int) ((length + step - 1) / step);
        Request r = start(op, n, length);
        if (r.future.isDone()) {
            return r.future;
        }
        long done = 0;
        try (BlockPlug plug = n > 1 ? plug() : BlockPlug.NONE) {
            while (done < length) {
                int len = (int) Math.min(step, length - done);
                ByteBuffer data = NO_DATA;
                if (buf != null) {
                    if (buf.remaining() == length) {
                        int from = buf.position() + (int) done;
                        data = buf.duplicate().limit(from + len).position(from).slice();
                    } else {
                        data = buf.duplicate().limit(buf.position() + len).slice();
                    }
                }
                submit(new Piece(r, op, flags, offset + done, len, data));
                done += len;
            }
        }
        return r.future;
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
     * A new request, counted in flight under the lock unmap checks; already completed when
     * the device is unmapped or there is nothing to do.
     */
    private Request start(int op, int pieces, long length) {
        Request r = new Request(op, pieces, length);
        synchronized (this) {
            if (state == DeviceState.UNMAPPED) {
                r.future.completeExceptionally(new BlockIoException(Errno.ENODEV, "device " + name + " is unmapped"));
            } else if (pieces == 0) {
                r.future.complete(null);
            } else {
                stats.started();
            }
        }
        return r;
    }

    /** Send a piece now, hold it until the OPEN completes, or fail it. */
    private void submit(Piece p) {
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
        p.sentWith = id;
        ByteBuffer hdr = Io.of(id, p.offset / OpenRsp.SECTOR_SIZE, p.op, p.flags, p.len).toBuffer();
        if (p.op == Io.OP_READ) {
            rtrs.read(hdr, p.data, p::completed);
        } else {
            rtrs.write(hdr, p.data, p::completed);
        }
    }

    /**
     * Whether a piece answered ENXIO should go again: a remap is due or under way (the
     * server answered a reconnected session that has not re-opened yet), or done with a new
     * id.
     */
    private synchronized boolean stale(Piece p) {
        return state == DeviceState.OPENING || state == DeviceState.DISCONNECTED
                || (state == DeviceState.MAPPED && geometry.deviceId() != p.sentWith);
    }

    /**
     * ENXIO for the current id of a MAPPED device: the server forgot the open while the
     * session stayed up (its RNBD layer restarted, or an operator force-closed it). Open
     * again and resend, as Linux's client re-opens its devices when its session comes back;
     * if the server now refuses the OPEN (export removed, access revoked), the device fails
     * with that errno. False when the piece was not sent with the current id.
     */
    private boolean reopenIfForgotten(Piece p) {
        synchronized (this) {
            if (state != DeviceState.MAPPED || geometry.deviceId() != p.sentWith) {
                return false;
            }
            LOG.warn("device {}: the server no longer knows device id {} (restarted or force-closed): opening export {} "
                    + "again", name, p.sentWith, exportName);
            moveTo(DeviceState.OPENING);
            held.add(p);
        }
        open();
        return true;
    }

    /** One caller request: completes when all its pieces have, with the first error. */
    private final class Request {
        final int op;
        final CompletableFuture<Void> future = new CompletableFuture<>();
        final AtomicInteger left;
        final AtomicInteger firstError = new AtomicInteger();
        final long length;
        final long startNanos = System.nanoTime();

        Request(int op, int pieces, long length) {
            this.op = op;
            this.left = new AtomicInteger(pieces);
            this.length = length;
        }

        void pieceDone(int errno) {
            if (errno != 0) {
                firstError.compareAndSet(0, errno);
            }
            if (left.decrementAndGet() == 0) {
                stats.finished();
                stats.latency(System.nanoTime() - startNanos);
                int e = firstError.get();
                if (e == 0) {
                    if (op == Io.OP_READ) {
                        stats.read(length);
                    } else if (op == Io.OP_WRITE) {
                        stats.wrote(length);
                    }
                    future.complete(null);
                } else {
                    stats.error();
                    future.completeExceptionally(new BlockIoException(e, "device " + name + " op " + op));
                }
            }
        }
    }

    private final class Piece {
        final Request request;
        final int op;
        final int flags;
        final long offset;
        final int len;
        final ByteBuffer data;
        volatile int sentWith;
        int resends;

        Piece(Request request, int op, int flags, long offset, int len, ByteBuffer data) {
            this.request = request;
            this.op = op;
            this.flags = flags;
            this.offset = offset;
            this.len = len;
            this.data = data;
        }

        void completed(int errno) {
            if (errno == Errno.ENXIO && resends < MAX_RESENDS) {
                if (stale(this)) {
                    resends++;
                    LOG.debug("device {}: request sent with stale id {} goes again", name, sentWith);
                    submit(this);
                    return;
                }
                resends++;
                if (reopenIfForgotten(this)) {
                    return;
                }
            }
            finish(errno);
        }

        void finish(int errno) {
            request.pieceDone(errno);
        }
    }
}

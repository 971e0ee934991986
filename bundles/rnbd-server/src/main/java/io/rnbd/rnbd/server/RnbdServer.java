package io.rnbd.rnbd.server;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockStats;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rnbd.proto.Close;
import io.rnbd.rnbd.proto.Io;
import io.rnbd.rnbd.proto.Open;
import io.rnbd.rnbd.proto.OpenRsp;
import io.rnbd.rnbd.proto.ProtoException;
import io.rnbd.rnbd.proto.RnbdMsg;
import io.rnbd.rnbd.proto.SessInfo;
import io.rnbd.rnbd.proto.SessInfoRsp;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.api.RtrsServerRequest;
import io.rnbd.rtrs.api.RtrsServerSession;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The RNBD server: the upper layer of an RTRS server, serving exports over block backends.
 * Plain Java; the OSGi component feeds it exports and backends as they come and go.
 *
 * <p>Every request gets exactly one answer; a malformed one gets an errno and nothing else
 * happens, so one hostile client cannot disturb the others.
 */
public final class RnbdServer implements RtrsServerOps, RnbdServerAdmin, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RnbdServer.class);

    private final ScheduledExecutorService scheduler;
    private final Object lifecycle = new Object();
    private final Map<String, Export> exports = new ConcurrentHashMap<>();
    private final Map<String, List<BlockBackend>> backends = new HashMap<>();
    private final Map<RtrsServerSession, ServerSession> sessions = new ConcurrentHashMap<>();
    /*
     * Device ids are unique across sessions and start at a random point, so an IO that a
     * client queued before a reconnect can never hit another device that reused its id.
     */
    private volatile DevSearchPath searchPath = new DevSearchPath(DevSearchPath.DEFAULT);
    /** How long the backend may hold one request before it is answered ETIMEDOUT; 0 = forever. */
    private volatile long backendTimeoutMs = DEFAULT_BACKEND_TIMEOUT_MS;
    /**
     * OPENs of an export that is not there, parked while the server is new (see
     * {@link #openGraceMs}); retried whenever an export is added. Guarded by lifecycle.
     */
    private final List<Runnable> parkedOpens = new ArrayList<>();
    /** Guarded by lifecycle. */
    private boolean openGrace;
    /** How often an export whose backend failed to open is tried again; 0 = only on a config or backend change. */
    private volatile long openRetryMs = DEFAULT_OPEN_RETRY_MS;
    /** The pending retry of failed opens, if any; guarded by {@link #lifecycle}. */
    private java.util.concurrent.ScheduledFuture<?> retry;
    private final AtomicInteger nextDeviceId = new AtomicInteger(ThreadLocalRandom.current().nextInt(1 << 30));

    /** @param scheduler times out IO waiting for an offline backend; owned by the caller */
    public RnbdServer(ScheduledExecutorService scheduler) {
        this.scheduler = scheduler;
    }

    // ---- configuration: exports and backends ----

    /** @throws IllegalStateException if an export of that name exists */
    public void addExport(ExportConfig config) {
        List<Runnable> parked;
        synchronized (lifecycle) {
            Export e = new Export(config, scheduler);
            Export samePath = exportAt(config.publishedPath());
            if (samePath != null) {
                throw new IllegalStateException("export " + config.name() + ": export " + samePath.name()
                        + " is already published at " + config.publishedPath());
            }
            if (exports.containsKey(config.name())) {
                throw new IllegalStateException("export " + config.name() + " already exists");
            }
            // online before it can be found: an OPEN racing the add (a parked one, or any) must
            // not meet the export without its backend (ENODEV). Adds and removes all hold
            // lifecycle, so the name is still free below.
            BlockBackend b = currentBackend(config.backend());
            if (b != null) {
                bringOnline(e, b);
            }
            exports.put(config.name(), e);
            parked = takeParkedOpens();
        }
        parked.forEach(Runnable::run);
    }

    /** Under {@link #lifecycle}: open {@code e} on {@code b}, and try again later if that failed. */
    private void bringOnline(Export e, BlockBackend b) {
        if (!e.online(b)) {
            scheduleRetry();
        }
    }

    private void scheduleRetry() {
        long ms = openRetryMs;
        if (ms <= 0 || (retry != null && !retry.isDone())) {
            return;
        }
        try {
            retry = scheduler.schedule(this::retryFailedOpens, ms, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException stopping) {
            // the server is closing: nothing to bring online
        }
    }

    /**
     * Open again every export whose backend is there but failed to open it: a file export
     * whose file did not exist yet comes online once the file appears, an RBD export once the
     * cluster answers, without touching the configuration.
     */
    private void retryFailedOpens() {
        synchronized (lifecycle) {
            retry = null;
            for (Export e : exports.values()) {
                BlockBackend b = currentBackend(e.config().backend());
                if (b != null && e.openFailed()) {
                    bringOnline(e, b);
                }
            }
        }
    }

    /**
     * Five seconds: a file that appears (copied in, created by a provisioning script) is
     * served soon enough, and one failing open per export every 5 s costs nothing.
     */
    public static final long DEFAULT_OPEN_RETRY_MS = 5_000;

    /** How often a failed backend open is retried (0 = never; only a config or backend change retries). */
    public void openRetryMs(long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("open.retry.ms must be >= 0: " + ms);
        }
        this.openRetryMs = ms;
        synchronized (lifecycle) {
            if (exports.values().stream().anyMatch(Export::openFailed)) {
                scheduleRetry();
            }
        }
    }

    /**
     * For {@code ms} from now, an OPEN of an export that is not there waits for exports to be
     * added instead of being answered ENOENT at once; when the time is up, what still finds
     * nothing is answered ENOENT. The exports of a server that was just started arrive one by
     * one after it (each is a configuration of its own), while its clients' requests, held by
     * the RTRS server during the restart, arrive at once: a client re-opening its device (the
     * server forgot the open) must not be told that its export does not exist. 0 = no wait.
     * Call once, right after construction.
     */
    public void openGraceMs(long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("open.grace.ms must be >= 0: " + ms);
        }
        if (ms == 0) {
            return;
        }
        synchronized (lifecycle) {
            openGrace = true;
        }
        scheduler.schedule(() -> {
            List<Runnable> parked;
            synchronized (lifecycle) {
                openGrace = false;
                parked = takeParkedOpens();
            }
            parked.forEach(Runnable::run);
        }, ms, TimeUnit.MILLISECONDS);
    }

    /** OPENs waiting for their export (for tests). */
    int parkedOpens() {
        synchronized (lifecycle) {
            return parkedOpens.size();
        }
    }

    private List<Runnable> takeParkedOpens() {
        List<Runnable> taken = List.copyOf(parkedOpens);
        parkedOpens.clear();
        return taken;
    }

    public void removeExport(String name) {
        synchronized (lifecycle) {
            Export e = exports.remove(name);
            if (e != null) {
                for (Opening o : e.close()) {
                    o.session().remove(o);
                }
            }
        }
    }

    /** A backend service of {@code type} appeared; the first one of a type serves its exports. */
    public void backendAdded(String type, BlockBackend backend) {
        synchronized (lifecycle) {
            List<BlockBackend> list = backends.computeIfAbsent(type, t -> new ArrayList<>());
            list.add(backend);
            if (list.get(0) == backend) {
                exportsOf(type).forEach(e -> bringOnline(e, backend));
            }
        }
    }

    /** A backend service went away: its exports go offline, or over to the next one of the type. */
    public void backendRemoved(String type, BlockBackend backend) {
        synchronized (lifecycle) {
            List<BlockBackend> list = backends.getOrDefault(type, new ArrayList<>());
            boolean wasCurrent = !list.isEmpty() && list.get(0) == backend;
            list.remove(backend);
            if (!wasCurrent) {
                return;
            }
            BlockBackend next = list.isEmpty() ? null : list.get(0);
            for (Export e : exportsOf(type)) {
                e.offline("backend '" + type + "' went away");
                if (next != null) {
                    bringOnline(e, next);
                }
            }
        }
    }

    private BlockBackend currentBackend(String type) {
        List<BlockBackend> list = backends.get(type);
        return list == null || list.isEmpty() ? null : list.get(0);
    }

    private List<Export> exportsOf(String type) {
        return exports.values().stream().filter(e -> e.config().backend().equals(type)).toList();
    }

    // ---- RtrsServerOps ----

    @Override
    public void onSessionConnected(RtrsServerSession session) {
        try {
            sessionOf(session);
            LOG.info("session {} connected", session.name());
        } catch (BlockIoException closedAlready) {
            LOG.debug("session {} closed before its connect was announced", session.name());
        }
    }

    @Override
    public void onSessionClosed(RtrsServerSession session) {
        ServerSession s = sessions.remove(session);
        if (s == null) {
            return;
        }
        for (Opening o : s.close()) {
            o.export().release(o);
        }
        LOG.info("session {} closed", session.name());
    }

    /**
     * What this server holds for {@code session}, made on its first request. Never for a
     * closed session: a request of one can still arrive after its close was announced (it
     * waited for this server while the RNBD bundle restarted, or raced the close on another
     * thread), and an open made for it then would hold the export, its one writer among
     * others, forever: the client's next session would be refused with EBUSY. The RTRS
     * server marks a session closed before it announces the close, so whichever of the two
     * comes second lets go of what the other left.
     */
    private ServerSession sessionOf(RtrsServerSession session) throws BlockIoException {
        ServerSession s = sessions.computeIfAbsent(session, ServerSession::new);
        if (session.closed()) {
            if (sessions.remove(session, s)) {
                for (Opening o : s.close()) {
                    o.export().release(o);
                }
            }
            throw new BlockIoException(Errno.ECONNRESET, "session " + session.name() + " is closed");
        }
        return s;
    }

    @Override
    public void onRequest(RtrsServerRequest request) {
        Reply req = new Reply(request);
        try {
            dispatch(req);
        } catch (ProtoException e) {
            LOG.debug("session {}: malformed message: {}", req.session().name(), e.getMessage());
            req.complete(e.errno());
        } catch (BlockIoException e) {
            LOG.debug("session {}: {}", req.session().name(), e.getMessage());
            req.complete(e.errno());
        } catch (RuntimeException e) {
            LOG.warn("session {}: request failed", req.session().name(), e);
            req.complete(Errno.EIO);
        }
    }

    /** Answers a request at most once, even when a failure comes after the answer went out. */
    private static final class Reply implements RtrsServerRequest {
        private final RtrsServerRequest req;
        private final java.util.concurrent.atomic.AtomicBoolean answered = new java.util.concurrent.atomic.AtomicBoolean();

        Reply(RtrsServerRequest req) {
            this.req = req;
        }

        @Override
        public RtrsServerSession session() {
            return req.session();
        }

        @Override
        public boolean isWrite() {
            return req.isWrite();
        }

        @Override
        public ByteBuffer userHeader() {
            return req.userHeader();
        }

        @Override
        public ByteBuffer data() {
            return req.data();
        }

        @Override
        public void complete(int errno) {
            if (answered.compareAndSet(false, true)) {
                req.complete(errno);
            } else {
                LOG.debug("session {}: second answer ({}) dropped", req.session().name(), Errno.name(errno));
            }
        }
    }

    private void dispatch(RtrsServerRequest req) throws ProtoException, BlockIoException {
        ServerSession s = sessionOf(req.session());
        RnbdMsg msg = RnbdMsg.decode(req.userHeader());
        if (msg instanceof Io io) {
            handleIo(req, s, io);
        } else if (msg instanceof SessInfo info) {
            ByteBuffer dst = replyBuffer(req, SessInfoRsp.SIZE);
            int version = Math.min(info.version(), RnbdMsg.VERSION_MAJOR);
            s.version(version);
            new SessInfoRsp(version).encode(dst);
            req.complete(0);
        } else if (msg instanceof Open open) {
            answerOpen(req, s, open, replyBuffer(req, OpenRsp.SIZE));
        } else if (msg instanceof Close close) {
            Opening o = s.device(close.deviceId());
            if (o != null && s.remove(o)) {
                o.export().release(o);
                LOG.info("session {}: closed device {} ({})", s.name(), o.deviceId(), o.export().name());
            }
            req.complete(0);
        } else {
            throw new ProtoException(Errno.EBADMSG, msg.type() + " is not a request");
        }
    }

    /** Answers an OPEN, or parks it while no export is found during the open grace. */
    private void answerOpen(RtrsServerRequest req, ServerSession s, Open open, ByteBuffer dst)
            throws BlockIoException {
        Opening o;
        try {
            o = open(s, open);
        } catch (BlockIoException e) {
            if (e.errno() == Errno.ENOENT && park(() -> retryOpen(req, s, open, dst))) {
                LOG.info("session {}: OPEN of {} waits for the exports of a server just started", s.name(),
                        open.deviceName());
                return;
            }
            throw e;
        }
        o.export().refreshSize();
        o.export().openRsp(o).encode(dst);
        req.complete(0);
    }

    private void retryOpen(RtrsServerRequest req, ServerSession s, Open open, ByteBuffer dst) {
        try {
            answerOpen(req, s, open, dst);
        } catch (BlockIoException e) {
            LOG.debug("session {}: {}", s.name(), e.getMessage());
            req.complete(e.errno());
        } catch (RuntimeException e) {
            LOG.warn("session {}: OPEN failed", s.name(), e);
            req.complete(Errno.EIO);
        }
    }

    private boolean park(Runnable retry) {
        synchronized (lifecycle) {
            if (!openGrace) {
                return false;
            }
            parkedOpens.add(retry);
            return true;
        }
    }

    private static ByteBuffer replyBuffer(RtrsServerRequest req, int size) throws BlockIoException {
        if (req.isWrite()) {
            throw new BlockIoException(Errno.EINVAL, "request expecting an answer sent as a write");
        }
        ByteBuffer dst = req.data();
        if (dst.remaining() < size) {
            throw new BlockIoException(Errno.EINVAL, "answer buffer of " + dst.remaining() + " < " + size + " bytes");
        }
        return dst;
    }

    /**
     * Under the session's lock, as the kernel's rnbd_srv holds srv_sess->lock over an open: a
     * client may have two OPENs of one device out at once (attach racing the handshake), and
     * with more than one IO thread they arrive together. Checked and added apart, both found
     * no device and the second met the export's one writer (EBUSY). Lock order: session, then
     * export; nothing takes them the other way round.
     */
    private Opening open(ServerSession s, Open open) throws BlockIoException {
        synchronized (s) {
            return openLocked(s, open);
        }
    }

    private Export exportAt(String path) {
        for (Export e : exports.values()) {
            if (e.config().publishedPath().equals(path)) {
                return e;
            }
        }
        return null;
    }

    /**
     * Below the client's default request timeout (30 s), so that a hung backend is answered
     * with an error for that request before the client gives up on the whole path.
     */
    public static final long DEFAULT_BACKEND_TIMEOUT_MS = 25_000;

    /** How long the backend may hold one request (0 = forever), see {@link Export#submit}. */
    public void backendTimeoutMs(long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("backend.timeout.ms must be >= 0: " + ms);
        }
        this.backendTimeoutMs = ms;
    }

    /** Linux's dev_search_path (rnbd-server module parameter): where OPEN's device names are looked up. */
    public void devSearchPath(String path) {
        this.searchPath = new DevSearchPath(path);
    }

    public String devSearchPath() {
        return searchPath.searchPath();
    }

    private Opening openLocked(ServerSession s, Open open) throws BlockIoException {
        String full = searchPath.resolve(s.name(), open.deviceName());
        Export e = exportAt(full);
        if (e == null) {
            LOG.info("session {}: OPEN of {} ({}): no export there (search path {})", s.name(), open.deviceName(),
                    full, searchPath.searchPath());
            throw new BlockIoException(Errno.ENOENT, "no export at " + full);
        }
        Opening existing = s.byExport(e.name());
        if (existing != null) {
            // Re-OPEN (remap, resize) answers the open device; another mode is another mapping.
            if (existing.mode() != open.accessMode()) {
                throw new BlockIoException(Errno.EEXIST, "export " + e.name() + " already open as "
                        + existing.mode());
            }
            return existing;
        }
        String refusal = e.config().refusal(s.rtrs);
        if (refusal != null) {
            LOG.warn("session {} may not open export {}: {}", s.name(), e.name(), refusal);
            throw new BlockIoException(Errno.EACCES, "not allowed: " + refusal);
        }
        Opening o = e.open(s, nextDeviceId.getAndUpdate(i -> (i + 1) & Integer.MAX_VALUE), open.accessMode());
        if (!s.add(o)) {
            e.release(o);
            throw new BlockIoException(Errno.ECONNRESET, "session closed");
        }
        LOG.info("session {}: opened export {} as device {} ({})", s.name(), e.name(), o.deviceId(), o.mode());
        return o;
    }

    private void handleIo(RtrsServerRequest req, ServerSession s, Io io) throws BlockIoException {
        Opening o = s.device(io.deviceId());
        if (o == null) {
            throw new BlockIoException(Errno.ENXIO, "unknown device id " + io.deviceId());
        }
        Export e = o.export();
        BlockStats stats = e.stats();
        Function<BlockDevice, CompletableFuture<Void>> op;
        try {
            op = ioOp(req, o, io);
        } catch (BlockIoException ex) {
            stats.error();
            throw ex;
        }
        stats.started();
        long startNanos = System.nanoTime();
        e.submit(op, io.op() != Io.OP_READ, backendTimeoutMs, errno -> {
            stats.finished();
            stats.latency(System.nanoTime() - startNanos);
            if (errno != 0) {
                stats.error();
            } else if (io.op() == Io.OP_READ) {
                stats.read(io.biSize());
            } else if (io.op() == Io.OP_WRITE) {
                stats.wrote(io.biSize());
            }
            req.complete(errno);
        });
    }

    /** Validate {@code io} against the opening and the device; the operation to run. */
    private static Function<BlockDevice, CompletableFuture<Void>> ioOp(RtrsServerRequest req, Opening o, Io io)
            throws BlockIoException {
        Export.Geometry g = o.export().geometry();
        int op = io.op();
        // Linux's client sends a FLUSH as an RTRS read without data (rq_data_dir of REQ_OP_FLUSH
        // is READ), ours as a write: either direction carries it
        if (op != Io.OP_FLUSH && (op == Io.OP_READ) == req.isWrite()) {
            throw new BlockIoException(Errno.EINVAL, "op " + op + " sent in the wrong direction");
        }
        if (op != Io.OP_READ && op != Io.OP_FLUSH && !o.writable()) {
            throw new BlockIoException(Errno.EROFS, "device " + io.deviceId() + " is mapped read-only");
        }
        ByteBuffer data = req.data();
        if (op != Io.OP_READ && op != Io.OP_WRITE && data.hasRemaining()) {
            throw new BlockIoException(Errno.EINVAL, "op " + op + " carries data");
        }
        if (op == Io.OP_FLUSH) {
            return BlockDevice::flush;
        }
        long offset = io.offset();
        int len = io.biSize();
        int lbs = g.logicalBlockSize();
        if (len == 0 || offset % lbs != 0 || len % lbs != 0) {
            throw new BlockIoException(Errno.EINVAL, "IO at " + offset + "+" + len + " not aligned to " + lbs);
        }
        if (offset > g.size() - len) {
            throw new BlockIoException(Errno.EINVAL, "IO at " + offset + "+" + len + " beyond " + g.size());
        }
        boolean fua = io.has(Io.F_FUA);
        Function<BlockDevice, CompletableFuture<Void>> body;
        switch (op) {
            case Io.OP_READ:
            case Io.OP_WRITE:
                if (len > g.maxIoSize()) {
                    throw new BlockIoException(Errno.EINVAL, "IO of " + len + " > max " + g.maxIoSize());
                }
                if (data.remaining() != len) {
                    throw new BlockIoException(Errno.EINVAL, "bi_size " + len + " but " + data.remaining()
                            + " bytes of data");
                }
                body = op == Io.OP_READ ? d -> d.read(offset, data) : d -> d.write(offset, data, fua);
                break;
            case Io.OP_DISCARD:
                if (!g.caps().trim()) {
                    throw new BlockIoException(Errno.EOPNOTSUPP, "export cannot discard");
                }
                body = d -> d.trim(offset, len);
                break;
            case Io.OP_WRITE_ZEROES:
                body = d -> d.writeZeroes(offset, len, fua);
                break;
            default:
                throw new BlockIoException(Errno.EOPNOTSUPP, "op " + op + " not supported");
        }
        if (io.has(Io.F_PREFLUSH)) {
            return d -> d.flush().thenCompose(v -> body.apply(d));
        }
        return body;
    }

    // ---- RnbdServerAdmin ----

    @Override
    public List<ExportInfo> exports() {
        return exports.values().stream().sorted(Comparator.comparing(Export::name)).map(e -> {
            Export.Geometry g = e.geometry();
            return new ExportInfo(e.name(), e.config().backend(), g == null ? 0 : g.size(), e.adminState(),
                    e.config().readOnly(), e.openerInfo(), e.stats().snapshot(), e.lastError());
        }).toList();
    }

    @Override
    public void forceClose(String export, String session) throws IOException {
        Export e = exports.get(export);
        if (e == null) {
            throw new BlockIoException(Errno.ENOENT, "no export " + export);
        }
        boolean found = false;
        for (Opening o : e.openers()) {
            if (o.session().name().equals(session) && o.session().remove(o)) {
                e.release(o);
                found = true;
                LOG.info("export {}: force-closed device {} of session {}", export, o.deviceId(), session);
            }
        }
        if (!found) {
            throw new BlockIoException(Errno.ENOENT, "session " + session + " has not opened " + export);
        }
    }

    @Override
    public void resetStats(String export) throws IOException {
        Export e = exports.get(export);
        if (e == null) {
            throw new BlockIoException(Errno.ENOENT, "no export " + export);
        }
        e.stats().reset();
    }

    /** The current backend of the type checks the parameters; nothing is checked while there is none. */
    @Override
    public void validateExport(String backend, Map<String, String> params, boolean readOnly) throws IOException {
        BlockBackend b;
        synchronized (lifecycle) {
            b = currentBackend(backend);
        }
        if (b != null) {
            b.validate(params, readOnly);
        }
    }

    /** A minute: a file extended or an RBD image resized by its cluster can take a while, not forever. */
    static final long RESIZE_TIMEOUT_MS = 60_000;

    @Override
    public long resizeExport(String export, long bytes) throws IOException {
        Export e = exports.get(export);
        if (e == null) {
            throw new BlockIoException(Errno.ENOENT, "no export " + export);
        }
        long now = e.resize(bytes, RESIZE_TIMEOUT_MS);
        LOG.info("export {} resized to {} bytes", export, now);
        return now;
    }

    /** Close every export (waiting IO fails) and forget every session. */
    @Override
    public void close() {
        List<Runnable> parked;
        synchronized (lifecycle) {
            if (retry != null) {
                retry.cancel(false);
                retry = null;
            }
            for (String name : List.copyOf(exports.keySet())) {
                removeExport(name);
            }
            sessions.clear();
            // no export comes any more: parked OPENs are answered (ENOENT) now
            openGrace = false;
            parked = takeParkedOpens();
        }
        parked.forEach(Runnable::run);
    }
}

package io.rnbd.rnbd.server.internal;

import io.rnbd.common.Errno;
import io.rnbd.common.Provider;
import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockIoException;
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
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The RNBD server: the upper layer of an RTRS server, serving exports over block backends.
 * Plain Java, and the service object itself: the OSGi component registers it as
 * {@link RtrsServerOps} and {@link RnbdServerAdmin} and feeds it exports and backends as they
 * come and go ({@link ExportTable}). A request's session is found here and its message
 * decoded; OPEN and CLOSE go to {@link OpenHandler}, IO to {@link IoHandler}.
 *
 * <p>Every request gets exactly one answer; a malformed one gets an errno and nothing else
 * happens, so one hostile client cannot disturb the others.
 */
public final class RnbdServer implements RtrsServerOps, RnbdServerAdmin, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RnbdServer.class);

    /**
     * Five seconds: a file that appears (copied in, created by a provisioning script) is
     * served soon enough, and one failing open per export every 5 s costs nothing.
     */
    public static final long DEFAULT_OPEN_RETRY_MS = 5_000;
    /**
     * Below the client's default request timeout (30 s), so that the export reports a hung
     * backend before the client gives up on the path (the request itself is answered only when
     * the backend gives it back: Export.submit says why).
     */
    public static final long DEFAULT_BACKEND_TIMEOUT_MS = 25_000;
    /** A minute: a file extended or an RBD image resized by its cluster can take a while, not forever. */
    static final long RESIZE_TIMEOUT_MS = 60_000;

    private final Map<RtrsServerSession, ServerSession> sessions = new ConcurrentHashMap<>();
    private final HaSettings ha = new HaSettings();
    private final ExportTable exports;
    private final OpenHandler opens;
    private final IoHandler io = new IoHandler();

    /**
     * The timer thread an RNBD server wants: every request to a backend arms a timeout
     * ({@code backend.timeout.ms}) that its completion cancels, so cancelled timers must leave
     * the queue at once (remove-on-cancel). A plain single-thread scheduler keeps each until
     * its deadline: at 10 K IOPS and the default 25 s, a quarter of a million dead timers that
     * every schedule sifts through.
     */
    public static ScheduledExecutorService newScheduler(String threadName) {
        java.util.concurrent.ScheduledThreadPoolExecutor s = new java.util.concurrent.ScheduledThreadPoolExecutor(1,
                r -> {
                    Thread t = new Thread(r, threadName);
                    t.setDaemon(true);
                    return t;
                });
        s.setRemoveOnCancelPolicy(true);
        return s;
    }

    /**
     * @param scheduler times out IO waiting for an offline backend and IO the backend holds too
     *                  long; owned by the caller, best made by {@link #newScheduler}
     */
    public RnbdServer(ScheduledExecutorService scheduler) {
        this.exports = new ExportTable(scheduler, ha);
        this.opens = new OpenHandler(exports);
    }

    // ---- configuration: exports and backends ----

    /** @throws IllegalStateException if an export of that name exists */
    public void addExport(ExportConfig config) {
        exports.add(config);
    }

    public void removeExport(String name) {
        exports.remove(name);
    }

    /** A backend service of {@code type} appeared; the first one of a type serves its exports. */
    public void backendAdded(String type, BlockBackend backend) {
        exports.backendAdded(type, backend);
    }

    /** The same, with the provider the console lists it as ({@link #backends}). */
    public void backendAdded(String type, BlockBackend backend, Provider provider) {
        exports.backendAdded(type, backend, provider);
    }

    @Override
    public List<Provider> backends() {
        return exports.providers();
    }

    /** A backend service went away: its exports go offline, or over to the next one of the type. */
    public void backendRemoved(String type, BlockBackend backend) {
        exports.backendRemoved(type, backend);
    }

    /** How often a failed backend open is retried (0 = never; only a config or backend change retries). */
    public void openRetryMs(long ms) {
        exports.openRetryMs(ms);
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
        exports.openGraceMs(ms);
    }

    /**
     * This server's name in the holder record of an export several servers serve (what the
     * others and the console show as active); default the host name.
     */
    public void serverName(String name) {
        ha.server(name);
    }

    /**
     * A takeover of a storage that an appliance server took less than this long ago is refused
     * (EBUSY): clients that each lost a different server cannot move it more often.
     */
    public void haHoldoffMs(long ms) {
        ha.holdoffMs(ms);
    }

    /** How often the server looks at the storage of its exports of several servers (0 = never). */
    public void haProbeMs(long ms) {
        ha.probeMs(ms);
    }

    /** For tests on fake time: the clock a holder's age is measured with. */
    public void haWallClock(java.util.function.LongSupplier clock) {
        ha.wallClock(clock);
    }

    /** OPENs waiting for their export (for tests). */
    int parkedOpens() {
        return exports.parkedOpens();
    }

    /** How long the backend may hold one request (0 = forever), see {@link Export#submit}. */
    public void backendTimeoutMs(long ms) {
        io.backendTimeoutMs(ms);
    }

    /** Linux's dev_search_path (rnbd-server module parameter): where OPEN's device names are looked up. */
    public void devSearchPath(String path) {
        opens.searchPath(new DevSearchPath(path));
    }

    public String devSearchPath() {
        return opens.searchPath().searchPath();
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
    public void onRequest(RtrsServerRequest req) {
        // a failure after the answer went out answers again: the transport drops that
        // (RtrsServerRequest.complete), so nothing here guards it a second time
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

    private void dispatch(RtrsServerRequest req) throws ProtoException, BlockIoException {
        ServerSession s = sessionOf(req.session());
        RnbdMsg msg = RnbdMsg.decode(req.userHeader());
        if (msg instanceof Io m) {
            io.handle(req, s, m);
        } else if (msg instanceof SessInfo info) {
            ByteBuffer dst = replyBuffer(req, SessInfoRsp.SIZE);
            int version = Math.min(info.version(), RnbdMsg.VERSION_MAJOR);
            s.version(version);
            s.ha(info.ha());
            new SessInfoRsp(version, info.ha()).encode(dst);
            req.complete(0);
        } else if (msg instanceof Open open) {
            opens.open(req, s, open, replyBuffer(req, OpenRsp.SIZE));
        } else if (msg instanceof Close close) {
            opens.close(req, s, close);
        } else {
            throw new ProtoException(Errno.EBADMSG, msg.type() + " is not a request");
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

    // ---- RnbdServerAdmin ----

    @Override
    public List<ExportInfo> exports() {
        return exports.all().stream().sorted(Comparator.comparing(Export::name)).map(e -> {
            Geometry g = e.geometry();
            return new ExportInfo(e.name(), e.config().backend(), g == null ? 0 : g.size(), e.adminState(),
                    e.config().readOnly(), e.openerInfo(), e.stats().snapshot(), e.lastError(), e.haInfo());
        }).toList();
    }

    @Override
    public void forceClose(String export, String session) throws IOException {
        Export e = export(export);
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
        export(export).stats().reset();
    }

    /** The current backend of the type checks the parameters; nothing is checked while there is none. */
    @Override
    public void validateExport(String backend, Map<String, String> params, boolean readOnly) throws IOException {
        BlockBackend b = exports.backend(backend);
        if (b != null) {
            b.validate(params, readOnly);
        }
    }

    @Override
    public long resizeExport(String export, long bytes) throws IOException {
        long now = export(export).resize(bytes, RESIZE_TIMEOUT_MS);
        LOG.info("export {} resized to {} bytes", export, now);
        return now;
    }

    // package-private for tests, which look at an export's role
    Export export(String name) throws BlockIoException {
        Export e = exports.get(name);
        if (e == null) {
            throw new BlockIoException(Errno.ENOENT, "no export " + name);
        }
        return e;
    }

    /** Close every export (waiting IO fails) and forget every session. */
    @Override
    public void close() {
        exports.close();
        sessions.clear();
        ha.close();
    }
}

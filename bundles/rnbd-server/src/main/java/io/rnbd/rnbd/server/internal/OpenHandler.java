package io.rnbd.rnbd.server.internal;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.proto.Close;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rnbd.proto.Open;
import io.rnbd.rnbd.proto.OpenRsp;
import io.rnbd.rtrs.api.RtrsServerRequest;
import java.nio.ByteBuffer;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * OPEN and CLOSE of a device by a session, as rnbd-srv.c's process_msg_open and
 * process_msg_close: the OPEN's device name resolved through the search path to an export,
 * the session's access checked, a device id given (or the open device answered again); an
 * OPEN that finds nothing while the server is new waits for the exports still arriving.
 */
final class OpenHandler {
    /** The server's log, as before RnbdServer was split: operators filter it by that name. */
    private static final Logger LOG = LoggerFactory.getLogger(RnbdServer.class);

    private final ExportTable exports;
    private volatile DevSearchPath searchPath = new DevSearchPath(DevSearchPath.DEFAULT);
    /*
     * Device ids are unique across sessions and start at a random point, so an IO that a
     * client queued before a reconnect can never hit another device that reused its id.
     */
    private final AtomicInteger nextDeviceId = new AtomicInteger(ThreadLocalRandom.current().nextInt(1 << 30));

    OpenHandler(ExportTable exports) {
        this.exports = exports;
    }

    void searchPath(DevSearchPath path) {
        this.searchPath = path;
    }

    DevSearchPath searchPath() {
        return searchPath;
    }

    /** Answers an OPEN, or parks it while no export is found during the open grace. */
    void open(RtrsServerRequest req, ServerSession s, Open open, ByteBuffer dst) throws BlockIoException {
        Opening o;
        long seen = exports.added();
        try {
            o = openDevice(s, open);
        } catch (BlockIoException e) {
            if (e.errno() == Errno.ENOENT) {
                ExportTable.Parked p = exports.park(seen, () -> retryOpen(req, s, open, dst));
                if (p == ExportTable.Parked.WAITS) {
                    LOG.info("session {}: OPEN of {} waits for the exports of a server just started", s.name(),
                            open.deviceName());
                }
                if (p != ExportTable.Parked.NO) {
                    return;
                }
            }
            throw e;
        }
        Export e = o.export();
        e.refreshSize();
        ExportRole role = e.role();
        if (role != null && open.takeover() && s.ha()) {
            if (!o.writable()) {
                throw new BlockIoException(Errno.EROFS, "a read-only mapping of " + e.name()
                        + " cannot take its storage over");
            }
            role.takeOver("asked by session " + s.name()).whenComplete((h, t) -> {
                if (t != null) {
                    LOG.info("session {}: takeover of {} not done: {}", s.name(), e.name(), t.getMessage());
                    req.complete(BlockIoException.errnoOf(t));
                } else {
                    answer(req, s, o, dst);
                }
            });
            return;
        }
        answer(req, s, o, dst);
    }

    /**
     * OPEN_RSP as Linux's server fills it; to an appliance client (SESS_INFO's EXT_HA) the
     * several-servers fields too: an export of several servers, whether this one is active, and
     * the holder's generation as this server knows it.
     */
    private static void answer(RtrsServerRequest req, ServerSession s, Opening o, ByteBuffer dst) {
        Export e = o.export();
        OpenRsp rsp = e.geometry().openRsp(o);
        ExportRole role = e.role();
        if (role != null && s.ha()) {
            RnbdServerAdmin.HaInfo i = role.info();
            rsp = rsp.withHa(OpenRsp.HA_EXPORT | (i.role() == RnbdServerAdmin.Role.ACTIVE ? OpenRsp.HA_ACTIVE : 0),
                    i.generation());
        }
        rsp.encode(dst);
        req.complete(0);
    }

    private void retryOpen(RtrsServerRequest req, ServerSession s, Open open, ByteBuffer dst) {
        try {
            open(req, s, open, dst);
        } catch (BlockIoException e) {
            LOG.debug("session {}: {}", s.name(), e.getMessage());
            req.complete(e.errno());
        } catch (RuntimeException e) {
            LOG.warn("session {}: OPEN failed", s.name(), e);
            req.complete(Errno.EIO);
        }
    }

    /**
     * Under the session's lock, as the kernel's rnbd_srv holds srv_sess->lock over an open: a
     * client may have two OPENs of one device out at once (attach racing the handshake), and
     * with more than one IO thread they arrive together. Checked and added apart, both found
     * no device and the second met the export's one writer (EBUSY). Lock order: session, then
     * export; nothing takes them the other way round.
     */
    private Opening openDevice(ServerSession s, Open open) throws BlockIoException {
        synchronized (s) {
            return openLocked(s, open);
        }
    }

    private Opening openLocked(ServerSession s, Open open) throws BlockIoException {
        DevSearchPath path = searchPath;
        String full = path.resolve(s.name(), open.deviceName());
        Export e = exports.at(full);
        if (e == null) {
            LOG.info("session {}: OPEN of {} ({}): no export there (search path {})", s.name(), open.deviceName(),
                    full, path.searchPath());
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
        Opening o = e.open(s, nextDeviceId.getAndUpdate(i -> (i + 1) & Integer.MAX_VALUE), open.accessMode(),
                open.leg() && s.ha());
        if (!s.add(o)) {
            e.release(o);
            throw new BlockIoException(Errno.ECONNRESET, "session closed");
        }
        LOG.info("session {}: opened export {} as device {} ({})", s.name(), e.name(), o.deviceId(), o.mode());
        return o;
    }

    /** A CLOSE of a device the session does not have open is answered 0 all the same. */
    void close(RtrsServerRequest req, ServerSession s, Close close) {
        Opening o = s.device(close.deviceId());
        if (o != null && s.remove(o)) {
            o.export().release(o);
            LOG.info("session {}: closed device {} ({})", s.name(), o.deviceId(), o.export().name());
        }
        req.complete(0);
    }
}

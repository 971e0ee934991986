package io.rnbd.rnbd.server.internal;

import io.rnbd.rtrs.api.RtrsServerSession;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** What the RNBD server holds for one RTRS session: its protocol version and open devices. */
final class ServerSession {
    final RtrsServerSession rtrs;
    /** Written under this object's lock; read without it on every IO ({@link #device}). */
    private final Map<Integer, Opening> devices = new ConcurrentHashMap<>();
    private int version;
    /** The client speaks the several-servers extension (SESS_INFO's EXT_HA): an appliance client. */
    private volatile boolean ha;
    private boolean closed;

    ServerSession(RtrsServerSession rtrs) {
        this.rtrs = rtrs;
    }

    String name() {
        return rtrs.name();
    }

    synchronized void version(int v) {
        version = v;
    }

    synchronized int version() {
        return version;
    }

    void ha(boolean speaks) {
        ha = speaks;
    }

    boolean ha() {
        return ha;
    }

    /**
     * The open device for an IO, without the lock: this runs on every IO on the server's
     * IO thread, where the monitor's atomic instruction showed as 2 % of the samples.
     */
    Opening device(int id) {
        return devices.get(id);
    }

    synchronized Opening byExport(String exportName) {
        for (Opening o : devices.values()) {
            if (o.export().name().equals(exportName)) {
                return o;
            }
        }
        return null;
    }

    /** @return false if the session is already closed (the caller must undo its open) */
    synchronized boolean add(Opening o) {
        if (closed) {
            return false;
        }
        devices.put(o.deviceId(), o);
        return true;
    }

    synchronized boolean remove(Opening o) {
        return devices.remove(o.deviceId(), o);
    }

    /** Mark closed and hand back everything still open. */
    synchronized List<Opening> close() {
        closed = true;
        List<Opening> all = new ArrayList<>(devices.values());
        devices.clear();
        return all;
    }
}

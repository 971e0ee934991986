package io.rnbd.rnbd.client;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rtrs.api.RtrsClientSession;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The RNBD client: mappings by device name over RTRS sessions by session name. Sessions
 * come and go (the OSGi glue reports them); a mapping waits for its session.
 */
public final class RnbdClient implements RnbdClientAdmin, AutoCloseable {
    private final DevicePublisher publisher;
    private final Map<String, RnbdClientSession> sessions = new HashMap<>();
    private final Map<String, RnbdClientDevice> devices = new HashMap<>();
    private final ScheduledExecutorService scheduler;
    /** The periodic size refresh, while one is set; guarded by this. */
    private ScheduledFuture<?> refresher;

    /** A client that learns new sizes only by {@link #resize}, {@link #refreshSizes} or IO beyond the end. */
    public RnbdClient(DevicePublisher publisher) {
        this(publisher, null, 0);
    }

    /**
     * @param scheduler       runs the periodic size refresh (owned by the caller)
     * @param sizeRefreshMs   how often every mapped device asks its server for the export's
     *                        size ({@link #refreshSizes}); 0 = never
     */
    public RnbdClient(DevicePublisher publisher, ScheduledExecutorService scheduler, long sizeRefreshMs) {
        this.publisher = publisher;
        this.scheduler = scheduler;
        sizeRefreshMs(sizeRefreshMs);
    }

    /**
     * Five seconds: an export grown on the server reaches the mapped device (and the NBD
     * gateway's new connections) within that, for one small OPEN per device, no data.
     */
    public static final long DEFAULT_SIZE_REFRESH_MS = 5_000;

    /** Change how often sizes are refreshed (0 = never); takes effect at once. */
    public synchronized void sizeRefreshMs(long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("size.refresh.ms must be >= 0: " + ms);
        }
        if (refresher != null) {
            refresher.cancel(false);
            refresher = null;
        }
        if (ms > 0) {
            if (scheduler == null) {
                throw new IllegalStateException("no scheduler to refresh sizes with");
            }
            refresher = scheduler.scheduleWithFixedDelay(() -> refreshSizes(), ms, ms, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Every mapped device asks the server for its export's size and adopts it (a re-OPEN,
     * wire-compatible with Linux's rnbd-server): the server sends nothing when an export
     * grows, so this is how a mapping learns without a remap.
     */
    public CompletableFuture<Void> refreshSizes() {
        List<RnbdClientDevice> all;
        synchronized (this) {
            all = new ArrayList<>(devices.values());
        }
        return CompletableFuture.allOf(all.stream().map(RnbdClientDevice::refreshSize)
                .toArray(CompletableFuture[]::new));
    }

    /** An RTRS client session is available (it may still be connecting). */
    public void sessionAdded(RtrsClientSession rtrs) {
        RnbdClientSession cs = new RnbdClientSession(rtrs);
        List<RnbdClientDevice> mine;
        RnbdClientSession old;
        synchronized (this) {
            old = sessions.put(rtrs.name(), cs);
            mine = devicesOf(rtrs.name());
        }
        if (old != null) {
            old.stop();
        }
        cs.start();
        mine.forEach(cs::attach);
    }

    public void sessionRemoved(RtrsClientSession rtrs) {
        RnbdClientSession cs;
        synchronized (this) {
            cs = sessions.get(rtrs.name());
            if (cs == null || cs.rtrs() != rtrs) {
                return;
            }
            sessions.remove(rtrs.name());
        }
        cs.stop();
    }

    private List<RnbdClientDevice> devicesOf(String session) {
        return devices.values().stream().filter(d -> d.sessionName().equals(session)).toList();
    }

    @Override
    public CompletableFuture<RemoteBlockDevice> map(String device, String session, String export, AccessMode mode)
            throws IOException {
        if (device == null || device.isBlank() || session == null || session.isBlank()) {
            throw new BlockIoException(Errno.EINVAL, "device and session names are required");
        }
        RnbdClientDevice d;
        RnbdClientSession cs;
        try {
            d = new RnbdClientDevice(device, session, export, mode, publisher);
        } catch (IllegalArgumentException e) {
            throw new BlockIoException(Errno.EINVAL, e.getMessage());
        }
        synchronized (this) {
            if (devices.containsKey(device)) {
                throw new BlockIoException(Errno.EEXIST, "device " + device + " is already mapped");
            }
            for (RnbdClientDevice other : devicesOf(session)) {
                if (other.exportName().equals(export)) {
                    throw new BlockIoException(Errno.EEXIST, "export " + export + " is already mapped over session "
                            + session + " as " + other.name());
                }
            }
            devices.put(device, d);
            cs = sessions.get(session);
        }
        CompletableFuture<RemoteBlockDevice> mapped = d.open();
        if (cs != null) {
            cs.attach(d);
        }
        return mapped;
    }

    @Override
    public void unmap(String device, boolean force) throws IOException {
        RnbdClientDevice d;
        RnbdClientSession cs;
        synchronized (this) {
            d = device(device);
            d.unmap(force);
            devices.remove(device);
            cs = sessions.get(d.sessionName());
        }
        if (cs != null) {
            cs.detach(d);
        }
    }

    @Override
    public CompletableFuture<RemoteBlockDevice> remap(String device) throws IOException {
        return device(device).open();
    }

    @Override
    public CompletableFuture<Long> resize(String device) throws IOException {
        return device(device).open().thenApply(RemoteBlockDevice::size);
    }

    private synchronized RnbdClientDevice device(String name) throws BlockIoException {
        RnbdClientDevice d = devices.get(name);
        if (d == null) {
            throw new BlockIoException(Errno.ENOENT, "no device " + name);
        }
        return d;
    }

    @Override
    public List<DeviceInfo> devices() {
        List<RnbdClientDevice> all;
        synchronized (this) {
            all = new ArrayList<>(devices.values());
        }
        return all.stream().map(RnbdClientDevice::info).sorted(Comparator.comparing(DeviceInfo::name)).toList();
    }

    /** Unmap everything (forced) and let go of every session. */
    @Override
    public void close() {
        List<RnbdClientDevice> all;
        List<RnbdClientSession> css;
        synchronized (this) {
            if (refresher != null) {
                refresher.cancel(false);
                refresher = null;
            }
            all = new ArrayList<>(devices.values());
            css = new ArrayList<>(sessions.values());
            devices.clear();
            sessions.clear();
        }
        for (RnbdClientDevice d : all) {
            try {
                d.unmap(true);
            } catch (BlockIoException e) {
                throw new IllegalStateException(e);
            }
        }
        css.forEach(RnbdClientSession::stop);
    }
}

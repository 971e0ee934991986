package io.rnbd.rnbd.client.internal;

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
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The RNBD client: mappings by device name over RTRS sessions by session name. Sessions
 * come and go (the OSGi glue reports them); a mapping waits for its session.
 */
public final class RnbdClient implements RnbdClientAdmin, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RnbdClient.class);
    private final DevicePublisher publisher;
    private final Map<String, RnbdClientSession> sessions = new HashMap<>();
    private final Map<String, RnbdClientDevice> devices = new HashMap<>();
    /** Devices over several servers, by name; their legs are in no map, each session finds them. */
    private final Map<String, RnbdHaDevice> haDevices = new HashMap<>();
    private final ScheduledExecutorService scheduler;
    private volatile long haIoTimeoutMs = RnbdHaDevice.DEFAULT_IO_TIMEOUT_MS;
    private final LongSupplier nanos;
    /** The next OPEN of a device the server refused ({@link RemapPolicy}), one per device; guarded by this. */
    private final Map<RnbdClientDevice, ScheduledFuture<?>> reopens = new HashMap<>();
    /** The periodic size refresh, while one is set; guarded by this. */
    private ScheduledFuture<?> refresher;

    /** A client that learns new sizes only by {@link #resize}, {@link #refreshSizes} or IO beyond the end. */
    public RnbdClient(DevicePublisher publisher) {
        this(publisher, null, 0);
    }

    /**
     * @param scheduler       runs the periodic size refresh and the opens of devices the server
     *                        refused for now ({@link RemapPolicy}) (owned by the caller)
     * @param sizeRefreshMs   how often every mapped device asks its server for the export's
     *                        size ({@link #refreshSizes}); 0 = never
     */
    public RnbdClient(DevicePublisher publisher, ScheduledExecutorService scheduler, long sizeRefreshMs) {
        this(publisher, scheduler, sizeRefreshMs, System::nanoTime);
    }

    /** @param nanos the clock of IO timeouts and stalls of devices over several servers (tests: fake time) */
    public RnbdClient(DevicePublisher publisher, ScheduledExecutorService scheduler, long sizeRefreshMs,
                      LongSupplier nanos) {
        this.publisher = publisher;
        this.scheduler = scheduler;
        this.nanos = nanos;
        sizeRefreshMs(sizeRefreshMs);
    }

    /** How long IO of a device over several servers waits for an active one before it fails (EIO). */
    public void haIoTimeoutMs(long ms) {
        if (ms <= 0) {
            throw new IllegalArgumentException("ha.io.timeout.ms must be > 0: " + ms);
        }
        this.haIoTimeoutMs = ms;
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
        List<RnbdHaDevice> ha;
        synchronized (this) {
            all = new ArrayList<>(devices.values());
            ha = new ArrayList<>(haDevices.values());
        }
        List<CompletableFuture<Long>> f = new ArrayList<>();
        all.forEach(d -> f.add(d.refreshSize()));
        ha.forEach(d -> f.add(d.refreshSize()));
        return CompletableFuture.allOf(f.toArray(CompletableFuture[]::new));
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

    /** What goes over {@code session}: devices of one server, and the legs of devices over several. */
    private List<RnbdClientDevice> devicesOf(String session) {
        List<RnbdClientDevice> l = new ArrayList<>(devices.values().stream()
                .filter(d -> d.sessionName().equals(session)).toList());
        for (RnbdHaDevice h : haDevices.values()) {
            h.legs().stream().filter(d -> d.sessionName().equals(session)).forEach(l::add);
        }
        return l;
    }

    @Override
    public CompletableFuture<RemoteBlockDevice> map(String device, String session, String export, AccessMode mode)
            throws IOException {
        if (device == null || device.isBlank() || session == null || session.isBlank()) {
            throw new BlockIoException(Errno.EINVAL, "device and session names are required");
        }
        List<String> several = java.util.Arrays.stream(session.split(",")).map(String::trim)
                .filter(x -> !x.isEmpty()).toList();
        if (several.size() > 1) {
            return mapHa(device, several, export, mode);
        }
        session = several.isEmpty() ? session : several.get(0);
        RnbdClientDevice d;
        RnbdClientSession cs;
        try {
            d = new RnbdClientDevice(device, session, export, mode, publisher);
        } catch (IllegalArgumentException e) {
            throw new BlockIoException(Errno.EINVAL, e.getMessage());
        }
        d.onRefused(this::refused);
        synchronized (this) {
            if (devices.containsKey(device) || haDevices.containsKey(device)) {
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

    /**
     * A device over several servers: one leg per session, each attached to its session as a
     * device of its own would be; published once a server is active.
     */
    private CompletableFuture<RemoteBlockDevice> mapHa(String device, List<String> servers, String export,
                                                       AccessMode mode) throws IOException {
        if (scheduler == null) {
            throw new BlockIoException(Errno.EINVAL, "this RNBD client has no timer: it cannot map over several servers");
        }
        RnbdHaDevice d;
        try {
            d = new RnbdHaDevice(device, servers, export, mode, publisher, scheduler, haIoTimeoutMs, nanos,
                    System::currentTimeMillis);
        } catch (IllegalArgumentException e) {
            throw new BlockIoException(Errno.EINVAL, e.getMessage());
        }
        List<RnbdClientSession> attach = new ArrayList<>();
        synchronized (this) {
            if (devices.containsKey(device) || haDevices.containsKey(device)) {
                throw new BlockIoException(Errno.EEXIST, "device " + device + " is already mapped");
            }
            for (RnbdClientDevice leg : d.legs()) {
                for (RnbdClientDevice other : devicesOf(leg.sessionName())) {
                    if (other.exportName().equals(export)) {
                        throw new BlockIoException(Errno.EEXIST, "export " + export + " is already mapped over session "
                                + leg.sessionName() + " as " + other.name());
                    }
                }
            }
            haDevices.put(device, d);
            for (RnbdClientDevice leg : d.legs()) {
                attach.add(sessions.get(leg.sessionName()));
            }
        }
        CompletableFuture<RemoteBlockDevice> mapped = d.open();
        for (int i = 0; i < attach.size(); i++) {
            RnbdClientDevice leg = d.legs().get(i);
            leg.open();
            if (attach.get(i) != null) {
                attach.get(i).attach(leg);
            }
        }
        return mapped;
    }

    @Override
    public CompletableFuture<String> failback(String device, String session) throws IOException {
        RnbdHaDevice d;
        synchronized (this) {
            d = haDevices.get(device);
            if (d == null) {
                if (devices.containsKey(device)) {
                    throw new BlockIoException(Errno.EINVAL, "device " + device + " is mapped over one server");
                }
                throw new BlockIoException(Errno.ENOENT, "no device " + device);
            }
        }
        return d.failback(session);
    }

    @Override
    public void unmap(String device, boolean force) throws IOException {
        RnbdHaDevice ha;
        List<RnbdClientSession> css = new ArrayList<>();
        synchronized (this) {
            ha = haDevices.get(device);
            if (ha != null) {
                ha.unmap(force);
                haDevices.remove(device);
                for (RnbdClientDevice leg : ha.legs()) {
                    css.add(sessions.get(leg.sessionName()));
                }
            }
        }
        if (ha != null) {
            for (int i = 0; i < css.size(); i++) {
                if (css.get(i) != null) {
                    css.get(i).detach(ha.legs().get(i));
                }
            }
            return;
        }
        RnbdClientDevice d;
        RnbdClientSession cs;
        synchronized (this) {
            d = device(device);
            d.unmap(force);
            devices.remove(device);
            ScheduledFuture<?> reopen = reopens.remove(d);
            if (reopen != null) {
                reopen.cancel(false);
            }
            cs = sessions.get(d.sessionName());
        }
        if (cs != null) {
            cs.detach(d);
        }
    }

    /**
     * The server refused to open {@code d}: a refusal that may pass (the export not there yet,
     * held by another client) is followed by another OPEN, sooner the first times; a final one
     * waits for the operator (rnbd:remap) or the next reconnect.
     */
    private void refused(RnbdClientDevice d, int errno, int times) {
        if (scheduler == null) {
            return;
        }
        if (!RemapPolicy.retryable(errno)) {
            LOG.warn("device {}: the server's {} is final: not opened again until rnbd:remap {} or a reconnect",
                    d.name(), Errno.name(errno), d.name());
            return;
        }
        long ms = RemapPolicy.delayMs(times);
        synchronized (this) {
            if (devices.get(d.name()) != d || reopens.containsKey(d)) {
                return; // unmapped, or a reopen is due already (a reconnect's OPEN was refused too)
            }
            try {
                reopens.put(d, scheduler.schedule(() -> reopenIfRefused(d), ms, TimeUnit.MILLISECONDS));
            } catch (RejectedExecutionException e) {
                return; // the client is stopping
            }
        }
        LOG.info("device {}: opening export {} again in {} s ({}, refused {} time{} in a row)", d.name(),
                d.exportName(), ms / 1000.0, Errno.name(errno), times, times == 1 ? "" : "s");
    }

    private void reopenIfRefused(RnbdClientDevice d) {
        synchronized (this) {
            reopens.remove(d);
            if (devices.get(d.name()) != d) {
                return;
            }
        }
        if (d.state() == DeviceState.FAILED) {
            d.open();
        }
    }

    @Override
    public CompletableFuture<RemoteBlockDevice> remap(String device) throws IOException {
        RnbdHaDevice ha;
        synchronized (this) {
            ha = haDevices.get(device);
        }
        if (ha != null) {
            ha.legs().forEach(RnbdClientDevice::open);
            return ha.open();
        }
        return device(device).open();
    }

    @Override
    public CompletableFuture<Long> resize(String device) throws IOException {
        RnbdHaDevice ha;
        synchronized (this) {
            ha = haDevices.get(device);
        }
        if (ha != null) {
            return ha.refreshSize();
        }
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
        List<RnbdHaDevice> ha;
        synchronized (this) {
            all = new ArrayList<>(devices.values());
            ha = new ArrayList<>(haDevices.values());
        }
        List<DeviceInfo> infos = new ArrayList<>();
        all.forEach(d -> infos.add(d.info()));
        ha.forEach(d -> infos.add(d.info()));
        infos.sort(Comparator.comparing(DeviceInfo::name));
        return infos;
    }

    /** Unmap everything (forced) and let go of every session. */
    @Override
    public void close() {
        List<RnbdClientDevice> all;
        List<RnbdHaDevice> ha;
        List<RnbdClientSession> css;
        synchronized (this) {
            if (refresher != null) {
                refresher.cancel(false);
                refresher = null;
            }
            reopens.values().forEach(f -> f.cancel(false));
            reopens.clear();
            all = new ArrayList<>(devices.values());
            ha = new ArrayList<>(haDevices.values());
            css = new ArrayList<>(sessions.values());
            devices.clear();
            haDevices.clear();
            sessions.clear();
        }
        for (RnbdHaDevice d : ha) {
            try {
                d.unmap(true);
            } catch (BlockIoException e) {
                throw new IllegalStateException(e);
            }
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

package io.rnbd.rnbd.client.internal.osgi;

import io.rnbd.common.Bytes;
import io.rnbd.common.Errno;
import io.rnbd.common.Settle;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.Names;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.client.internal.RemapPolicy;
import java.io.IOException;
import java.util.Hashtable;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * The {@link RnbdClientAdmin} service: the running client's view and run-time operations,
 * and the operator's operations over ConfigAdmin (as {@code SoftLinkAdminComponent} does for
 * soft links). A mapping is a factory configuration of {@link MapComponent#PID}, created with
 * location "?" and found by its {@code device.name}, so those from etc/*.cfg count as well;
 * ConfigAdmin hands it to {@link MapComponent} on its own thread, so {@link #mapDevice} waits
 * for the outcome, and takes the configuration back when the client never took it (a
 * configuration without a device would only come back failing after every restart).
 */
final class ClientAdmin implements RnbdClientAdmin {
    /** How long {@link #mapDevice} waits for the OPEN's outcome. */
    static final long SETTLE_MS = 5000;
    /** How long remap and resize wait for the server's answer. */
    static final long ANSWER_MS = 10_000;
    private static final long POLL_MS = 20;
    private static final String ANY_LOCATION = "?";

    private final RnbdClientAdmin client;
    private final ConfigurationAdmin configAdmin;
    private final Settle settle;
    private final long settleMs;
    private final long answerMs;

    ClientAdmin(RnbdClientAdmin client, ConfigurationAdmin configAdmin) {
        this(client, configAdmin, System::nanoTime, Thread::sleep, SETTLE_MS, ANSWER_MS);
    }

    ClientAdmin(RnbdClientAdmin client, ConfigurationAdmin configAdmin, LongSupplier nanoClock,
                Settle.Sleeper sleeper, long settleMs, long answerMs) {
        this.client = client;
        this.configAdmin = configAdmin;
        this.settle = new Settle(nanoClock, sleeper, POLL_MS);
        this.settleMs = settleMs;
        this.answerMs = answerMs;
    }

    @Override
    public synchronized DeviceResult mapDevice(MapRequest r) throws IOException {
        String device = Names.require("device", r.device());
        if (r.sessions().isEmpty() || r.export() == null) {
            throw new BlockIoException(Errno.EINVAL, "a session and an export are required");
        }
        for (String s : r.sessions()) {
            Names.require("session", s);
        }
        String sessions = String.join(",", r.sessions());
        if (r.sessions().stream().distinct().count() != r.sessions().size()) {
            throw new BlockIoException(Errno.EINVAL, "a session is listed twice: " + sessions);
        }
        if (r.sessions().size() > 1 && r.mode() == AccessMode.RO) {
            throw new BlockIoException(Errno.EINVAL, "a read-only mapping needs no active server: map it over one "
                    + "session");
        }
        String export = Names.requireExport("export", r.export());
        Optional<DeviceInfo> existing = find(device);
        if (existing.isPresent() || !configs(device).isEmpty()) {
            throw new BlockIoException(Errno.EEXIST, "device '" + device + "' is already mapped"
                    + existing.map(d -> " (export " + d.export() + " over session " + d.session() + ")").orElse(""));
        }
        // the client refuses this with EEXIST inside MapComponent's activation, where no caller
        // would see it: say it here, before anything is configured
        for (String s : r.sessions()) {
            Optional<DeviceInfo> twin = client.devices().stream()
                    .filter(d -> (d.session().equals(s) || d.ha().sessions().contains(s)) && d.export().equals(export))
                    .findFirst();
            if (twin.isPresent()) {
                throw new BlockIoException(Errno.EEXIST, "export " + export + " is already mapped over session " + s
                        + " as " + twin.get().name());
            }
        }
        Hashtable<String, Object> p = new Hashtable<>();
        p.put("device.name", device);
        p.put("session.name", sessions);
        p.put("export.name", export);
        p.put("access.mode", r.mode().name());
        Configuration c = configAdmin.createFactoryConfiguration(MapComponent.PID, ANY_LOCATION);
        c.update(p);
        Optional<DeviceInfo> d = settle(device);
        if (d.isEmpty()) {
            c.delete();
            throw new BlockIoException(Errno.ETIMEDOUT, device + ": the RNBD client did not take the mapping within "
                    + settleMs + " ms (see the log); nothing was configured");
        }
        DeviceInfo info = d.get();
        if (info.state() == DeviceState.FAILED) {
            int errno = info.lastError() == 0 ? Errno.EIO : info.lastError();
            throw new BlockIoException(errno, device + ": the server refused to open " + export
                    + "; the mapping stays configured" + (RemapPolicy.retryable(errno)
                            ? " and the client opens it again by itself, at least once a minute"
                            : ": rnbd:remap " + device + " retries")
                    + ", rnbd:unmap " + device + " drops it");
        }
        if (info.state() == DeviceState.MAPPED) {
            return new DeviceResult(info, info.size(), device + " mapped: " + export + " over " + sessions + ", "
                    + r.mode() + ", " + Bytes.format(info.size())
                    + (r.sessions().size() > 1 ? "; active: " + active(info) : ""));
        }
        return new DeviceResult(info, info.size(), device + " " + lower(info.state()) + ": waiting for session "
                + sessions + "; it maps when the session connects");
    }

    /** The device once MAPPED or FAILED; else what there is at the deadline. */
    private Optional<DeviceInfo> settle(String device) throws BlockIoException {
        try {
            return settle.until(() -> find(device), d -> d.isPresent()
                    && (d.get().state() == DeviceState.MAPPED || d.get().state() == DeviceState.FAILED), settleMs);
        } catch (InterruptedException e) {
            throw new BlockIoException(Errno.EINTR, "interrupted waiting for " + device);
        }
    }

    @Override
    public synchronized DeviceResult unmapDevice(String device, boolean force) throws IOException {
        Names.require("device", device);
        List<Configuration> configs = configs(device);
        Optional<DeviceInfo> mapped = find(device);
        if (configs.isEmpty() && mapped.isEmpty()) {
            throw noDevice(device);
        }
        if (mapped.isPresent()) {
            try {
                client.unmap(device, force);
            } catch (IOException e) {
                throw BlockIoException.of(device, e, force ? "" : " (rnbd:unmap --force " + device + " unmaps anyway)");
            }
        }
        for (Configuration c : configs) {
            c.delete();
        }
        return new DeviceResult(null, 0, device + " unmapped");
    }

    @Override
    public DeviceResult remapDevice(String device) throws IOException {
        DeviceInfo before = device(device);
        await(client.remap(device), device, before);
        DeviceInfo after = device(device);
        return new DeviceResult(after, after.size(), device + " remapped: " + describe(after));
    }

    @Override
    public DeviceResult resizeDevice(String device) throws IOException {
        DeviceInfo before = device(device);
        long size = await(client.resize(device), device, before);
        return new DeviceResult(find(device).orElse(before), size, device + ": " + Bytes.format(size) + " (" + size
                + " bytes)");
    }

    private <T> T await(CompletableFuture<T> f, String device, DeviceInfo before) throws BlockIoException {
        try {
            return f.get(answerMs, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw BlockIoException.of(device, e.getCause() == null ? e : e.getCause(), "");
        } catch (TimeoutException e) {
            throw new BlockIoException(Errno.ETIMEDOUT, device + ": no answer within " + answerMs + " ms (" + device
                    + " is " + lower(before.state()) + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BlockIoException(Errno.EINTR, device + ": interrupted");
        }
    }

    private DeviceInfo device(String device) throws BlockIoException {
        Names.require("device", device);
        return find(device).orElseThrow(() -> noDevice(device));
    }

    private BlockIoException noDevice(String device) {
        String names = client.devices().stream().map(DeviceInfo::name).collect(Collectors.joining(", "));
        return new BlockIoException(Errno.ENOENT, "no mapped device '" + device + "'"
                + (names.isEmpty() ? " (no device is mapped)" : " (devices: " + names + ")"));
    }

    private Optional<DeviceInfo> find(String device) {
        return client.devices().stream().filter(d -> d.name().equals(device)).findFirst();
    }

    /** "mapped, 1.0 GiB" or "failed, last error ENOENT (2)": a device's state in a few words. */
    private static String describe(DeviceInfo d) {
        return lower(d.state()) + (d.size() > 0 ? ", " + Bytes.format(d.size()) : "")
                + (d.lastError() != 0 ? ", last error " + Errno.name(d.lastError()) + " (" + d.lastError() + ")" : "");
    }

    /** "b since 2026-11-29T09:12:03Z (generation 1, 0 takeovers)" or "none": where IO of a device over several servers goes. */
    private static String active(DeviceInfo d) {
        if (d.ha().active().isEmpty()) {
            return "none";
        }
        long n = d.ha().takeovers();
        return d.ha().active() + " since " + (d.ha().activeSince() <= 0 ? "-"
                : java.time.Instant.ofEpochMilli(d.ha().activeSince()).truncatedTo(java.time.temporal.ChronoUnit.SECONDS))
                + " (generation " + d.ha().generation() + ", " + n + " takeover" + (n == 1 ? "" : "s") + ")";
    }

    private static String lower(Enum<?> e) {
        return e.name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The mapping configurations of {@code device} (a checked name: no filter metacharacters). */
    private List<Configuration> configs(String device) throws BlockIoException {
        try {
            Configuration[] found = configAdmin.listConfigurations("(&(service.factoryPid=" + MapComponent.PID
                    + ")(device.name=" + device + "))");
            return found == null ? List.of() : List.of(found);
        } catch (IOException | InvalidSyntaxException e) {
            throw new BlockIoException(Errno.EIO, "cannot read configurations", e);
        }
    }

    // the running client, as it is

    @Override
    public List<DeviceInfo> devices() {
        return client.devices();
    }

    @Override
    public CompletableFuture<RemoteBlockDevice> map(String device, String session, String export, AccessMode mode)
            throws IOException {
        return client.map(device, session, export, mode);
    }

    @Override
    public void unmap(String device, boolean force) throws IOException {
        client.unmap(device, force);
    }

    @Override
    public CompletableFuture<RemoteBlockDevice> remap(String device) throws IOException {
        return client.remap(device);
    }

    @Override
    public CompletableFuture<Long> resize(String device) throws IOException {
        return client.resize(device);
    }

    @Override
    public CompletableFuture<String> failback(String device, String session) throws IOException {
        return client.failback(device, session);
    }
}

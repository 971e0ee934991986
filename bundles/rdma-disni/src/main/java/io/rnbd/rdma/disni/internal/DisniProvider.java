package io.rnbd.rdma.disni.internal;

import io.rnbd.rdma.api.RdmaException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one {@link ManagedDevice} per adapter under sysfs, polling the directory on the
 * given scheduler. An adapter that appears is opened and published; one that disappears
 * is unpublished first (clients get {@code remove} on a working device) and flushed
 * second. With no adapter, no native library or no rdma-core the provider stays dormant,
 * says why in {@link #status()}, logs each new reason once, and keeps polling so it
 * wakes up when the cause goes away.
 */
public final class DisniProvider implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DisniProvider.class);

    private final SysfsScanner scanner;
    private final VerbsRuntime runtime;
    private final DeviceFactory factory;
    private final DeviceListener listener;
    private final ScheduledExecutorService scheduler;
    private final Duration interval;
    private final Map<String, ManagedDevice> devices = new LinkedHashMap<>();
    /** Removed on the kernel's word while sysfs still lists them: not reopened until they vanish. */
    private final java.util.Set<String> departing = new java.util.HashSet<>();
    private ScheduledFuture<?> task;
    private ProviderStatus status = new ProviderStatus(false, "not started", List.of());
    private String loggedReason = "";
    private boolean closed;

    public DisniProvider(SysfsScanner scanner, VerbsRuntime runtime, DeviceFactory factory,
                         DeviceListener listener, ScheduledExecutorService scheduler, Duration interval) {
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("poll interval must be positive");
        }
        this.scanner = scanner;
        this.runtime = runtime;
        this.factory = factory;
        this.listener = listener;
        this.scheduler = scheduler;
        this.interval = interval;
    }

    public synchronized void start() {
        if (task == null && !closed) {
            task = scheduler.scheduleWithFixedDelay(this::scanSafely, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    public synchronized ProviderStatus status() {
        return status;
    }

    private void scanSafely() {
        try {
            scan();
        } catch (RuntimeException e) {
            // a throwing task would cancel the periodic scan: log and keep polling
            LOG.warn("rdma-disni: scan failed", e);
        }
    }

    /** One poll of the sysfs directory. */
    public synchronized void scan() {
        if (closed) {
            return;
        }
        Map<String, SysfsDevice> present = scanner.scan();
        for (String name : new ArrayList<>(devices.keySet())) {
            if (!present.containsKey(name)) {
                remove(name);
            }
        }
        departing.retainAll(present.keySet());
        present.keySet().removeAll(departing);
        List<String> problems = new ArrayList<>();
        if (present.isEmpty()) {
            problems.add("no RDMA adapter under " + scanner.root());
        } else {
            Optional<String> noNative = present.keySet().stream().allMatch(devices::containsKey)
                    ? Optional.empty() : runtime.unavailableReason();
            for (SysfsDevice info : present.values()) {
                ManagedDevice d = devices.get(info.name());
                if (d != null) {
                    d.update(info);
                } else if (noNative.isPresent()) {
                    problems.add(noNative.get());
                    break;
                } else {
                    open(info, problems);
                }
            }
        }
        setStatus(new ProviderStatus(!devices.isEmpty(), String.join("; ", problems), List.copyOf(devices.keySet())));
    }

    private void open(SysfsDevice info, List<String> problems) {
        try {
            ManagedDevice d = factory.open(info);
            devices.put(info.name(), d);
            d.onRemoval(() -> {
                try {
                    scheduler.execute(() -> removedByKernel(info.name(), d));
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    LOG.debug("rdma-disni: {} removal after the provider stopped", info.name());
                }
            });
            LOG.info("rdma-disni: device {} up (guid {}, {}, addresses {})", info.name(), info.nodeGuid(),
                    info.linkState(), info.addresses());
            listener.deviceAdded(d);
        } catch (RdmaException e) {
            problems.add(info.name() + ": " + e.getMessage());
        }
    }

    private synchronized void removedByKernel(String name, ManagedDevice d) {
        if (!closed && devices.get(name) == d) {
            departing.add(name);
            remove(name);
            scan();
        }
    }

    private void remove(String name) {
        ManagedDevice d = devices.remove(name);
        LOG.info("rdma-disni: device {} gone", name);
        try {
            listener.deviceRemoved(d);
        } finally {
            d.close();
        }
    }

    private void setStatus(ProviderStatus s) {
        boolean changed = !s.equals(status);
        status = s;
        if (!s.reason().equals(loggedReason)) {
            loggedReason = s.reason();
            if (!s.reason().isEmpty()) {
                LOG.warn("rdma-disni: {}", s.line());
            }
        }
        if (changed) {
            listener.statusChanged(s);
        }
    }

    /** Unpublishes and flushes every device; the scheduler belongs to the caller. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (task != null) {
            task.cancel(false);
        }
        for (String name : new ArrayList<>(devices.keySet())) {
            remove(name);
        }
        status = new ProviderStatus(false, "stopped", List.of());
    }
}

package io.rnbd.rdma.disni.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.DeviceAttributes;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.LinkState;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.testkit.FakeScheduler;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Discovery, dormancy and hot-plug on a fake sysfs tree and fake time. */
class DisniProviderTest {
    @TempDir
    Path sysfs;

    private final FakeScheduler scheduler = new FakeScheduler();
    private final List<String> events = new ArrayList<>();
    private final List<ProviderStatus> statuses = new ArrayList<>();
    private final AtomicReference<Optional<String>> nativeReason = new AtomicReference<>(Optional.empty());
    private final AtomicInteger probes = new AtomicInteger();
    private final AtomicReference<String> failOpen = new AtomicReference<>();
    private final java.util.Map<String, Runnable> removalHooks = new java.util.HashMap<>();

    private final class FakeDevice implements ManagedDevice {
        private final String name;
        private volatile SysfsDevice info;

        FakeDevice(SysfsDevice info) {
            this.name = info.name();
            this.info = info;
        }

        @Override
        public void update(SysfsDevice newer) {
            info = newer;
        }

        @Override
        public void onRemoval(Runnable hook) {
            removalHooks.put(name, hook);
        }

        @Override
        public void close() {
            events.add("flush " + name);
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String provider() {
            return "disni";
        }

        @Override
        public String nodeId() {
            return info.nodeGuid();
        }

        @Override
        public LinkState linkState() {
            return info.linkState();
        }

        @Override
        public DeviceAttributes attributes() {
            return DisniDevice.ATTRIBUTES;
        }

        @Override
        public List<InetAddress> addresses() {
            return info.addresses();
        }

        @Override
        public io.rnbd.rdma.api.ProtectionDomain allocPd() throws RdmaException {
            throw new RdmaException(Errno.ENOSYS, "fake");
        }

        @Override
        public io.rnbd.rdma.api.CmListener listen(InetSocketAddress a, io.rnbd.rdma.api.ConnectRequestHandler h)
                throws RdmaException {
            throw new RdmaException(Errno.ENOSYS, "fake");
        }

        @Override
        public io.rnbd.rdma.api.QueuePair connect(InetSocketAddress d, io.rnbd.rdma.api.QpInit i, byte[] p,
                                                  io.rnbd.rdma.api.CmEventHandler e) throws RdmaException {
            throw new RdmaException(Errno.ENOSYS, "fake");
        }
    }

    private final DeviceListener listener = new DeviceListener() {
        @Override
        public void deviceAdded(RdmaDevice device) {
            events.add("register " + device.name());
        }

        @Override
        public void deviceRemoved(RdmaDevice device) {
            events.add("unregister " + device.name());
        }

        @Override
        public void statusChanged(ProviderStatus status) {
            statuses.add(status);
        }
    };

    private DisniProvider provider() {
        VerbsRuntime runtime = () -> {
            probes.incrementAndGet();
            return nativeReason.get();
        };
        DeviceFactory factory = info -> {
            if (info.name().equals(failOpen.get())) {
                throw new RdmaException(Errno.ENODEV, "cannot open " + info.name());
            }
            events.add("open " + info.name());
            return new FakeDevice(info);
        };
        DisniProvider p = new DisniProvider(new SysfsScanner(sysfs, n -> List.of()), runtime, factory, listener,
                scheduler, Duration.ofSeconds(2));
        p.start();
        return p;
    }

    private void plug(String name) throws Exception {
        SysfsScannerTest.roce(sysfs, name, "4: ACTIVE", "0000:0000:0000:0000:0000:ffff:c000:0201", "dummy0");
    }

    private void unplug(String name) throws Exception {
        try (var s = Files.walk(sysfs.resolve(name))) {
            s.sorted((a, b) -> b.compareTo(a)).forEach(f -> f.toFile().delete());
        }
    }

    private void tick() {
        scheduler.advance(Duration.ofSeconds(2));
    }

    @Test
    void dormantWithoutAdapterThenWakesUpWhenOneAppears() throws Exception {
        DisniProvider p = provider();
        scheduler.runDue();
        assertFalse(p.status().active());
        assertTrue(p.status().reason().startsWith("no RDMA adapter under " + sysfs), p.status().reason());
        assertEquals(0, probes.get(), "the native library is not touched while there is no adapter");

        plug("rxe0");
        tick();
        assertEquals(List.of("open rxe0", "register rxe0"), events);
        assertTrue(p.status().active());
        assertEquals("active: rxe0", p.status().line());
        tick();
        assertEquals(2, events.size(), "a present device is opened once");
        p.close();
    }

    @Test
    void disappearingAdapterIsUnregisteredBeforeItIsFlushed() throws Exception {
        plug("rxe0");
        plug("mlx5_0");
        DisniProvider p = provider();
        scheduler.runDue();
        events.clear();
        unplug("rxe0");
        tick();
        assertEquals(List.of("unregister rxe0", "flush rxe0"), events);
        assertEquals(List.of("mlx5_0"), p.status().devices());
        p.close();
        assertEquals(List.of("unregister rxe0", "flush rxe0", "unregister mlx5_0", "flush mlx5_0"), events);
        assertEquals("dormant: stopped", p.status().line());
    }

    @Test
    void kernelRemovalUnpublishesAtOnceAndTheDeviceReturnsOnlyAfterLeavingSysfs() throws Exception {
        plug("rxe0");
        DisniProvider p = provider();
        scheduler.runDue();
        events.clear();
        removalHooks.get("rxe0").run(); // DEVICE_REMOVAL seen on a CM thread
        scheduler.runDue();
        assertEquals(List.of("unregister rxe0", "flush rxe0"), events, "before sysfs even changed");
        tick();
        assertEquals(2, events.size(), "not reopened while the kernel is still removing it");
        unplug("rxe0");
        tick();
        plug("rxe0");
        tick();
        assertEquals(List.of("unregister rxe0", "flush rxe0", "open rxe0", "register rxe0"), events);
        p.close();
    }

    @Test
    void missingNativeLibraryKeepsTheProviderDormantWithItsReason() throws Exception {
        nativeReason.set(Optional.of("native library libdisni.so not found in java.library.path (/x)"));
        plug("rxe0");
        DisniProvider p = provider();
        scheduler.runDue();
        tick();
        tick();
        assertTrue(events.isEmpty(), "nothing registered: " + events);
        assertEquals("dormant: native library libdisni.so not found in java.library.path (/x)", p.status().line());
        assertEquals(1, statuses.stream().filter(s -> s.reason().contains("libdisni")).count(),
                "the same reason is reported once, not on every poll");
        p.close();
    }

    @Test
    void deviceThatCannotBeOpenedIsRetriedAndTheOthersServe() throws Exception {
        failOpen.set("rxe1");
        plug("rxe0");
        plug("rxe1");
        DisniProvider p = provider();
        scheduler.runDue();
        assertEquals(List.of("open rxe0", "register rxe0"), events);
        assertTrue(p.status().active());
        assertTrue(p.status().line().contains("rxe1: ENODEV: cannot open rxe1"), p.status().line());
        failOpen.set(null);
        tick();
        assertEquals(List.of("open rxe0", "register rxe0", "open rxe1", "register rxe1"), events);
        assertEquals("active: rxe0, rxe1", p.status().line());
        p.close();
    }

    @Test
    void throwingScanKeepsPolling() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        plug("rxe0");
        DisniProvider p = new DisniProvider(new SysfsScanner(sysfs, n -> {
            if (calls.incrementAndGet() == 1) {
                throw new IllegalStateException("first lookup fails");
            }
            return List.of();
        }), Optional::empty, info -> new FakeDevice(info), listener, scheduler, Duration.ofSeconds(2));
        p.start();
        scheduler.runDue();
        assertTrue(events.isEmpty());
        tick();
        assertEquals(List.of("register rxe0"), events, "the periodic scan survives an exception");
        p.close();
    }

    @Test
    void closedProviderIgnoresLateScansAndRejectsBadInterval() throws Exception {
        DisniProvider p = provider();
        p.close();
        plug("rxe0");
        p.scan();
        assertTrue(events.isEmpty());
        assertThrows(IllegalArgumentException.class, () -> new DisniProvider(new SysfsScanner(sysfs),
                Optional::empty, info -> new FakeDevice(info), listener, scheduler, Duration.ZERO));
    }
}

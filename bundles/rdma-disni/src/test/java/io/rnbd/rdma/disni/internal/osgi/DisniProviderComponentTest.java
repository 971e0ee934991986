package io.rnbd.rdma.disni.internal.osgi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.testkit.Await;
import java.lang.annotation.Annotation;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.Dictionary;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;

/** The DS wrapper over a fake BundleContext: status service, dormancy, clean deactivation. */
class DisniProviderComponentTest {
    @TempDir
    Path sysfs;

    /** One registered service as the fake framework sees it. */
    static final class Reg {
        final String clazz;
        final Object service;
        volatile Dictionary<String, ?> props;
        volatile boolean unregistered;

        Reg(String clazz, Object service, Dictionary<String, ?> props) {
            this.clazz = clazz;
            this.service = service;
            this.props = props;
        }
    }

    private final List<Reg> regs = new CopyOnWriteArrayList<>();

    private BundleContext context() {
        return (BundleContext) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {BundleContext.class},
                (proxy, m, args) -> {
                    if (m.getName().equals("registerService")) {
                        String clazz = args[0] instanceof Class<?> c ? c.getName() : (String) args[0];
                        @SuppressWarnings("unchecked")
                        Reg r = new Reg(clazz, args[1], (Dictionary<String, ?>) args[2]);
                        regs.add(r);
                        return registration(r);
                    }
                    throw new UnsupportedOperationException(m.getName());
                });
    }

    private static ServiceRegistration<?> registration(Reg r) {
        return (ServiceRegistration<?>) Proxy.newProxyInstance(DisniProviderComponentTest.class.getClassLoader(),
                new Class<?>[] {ServiceRegistration.class}, (proxy, m, args) -> {
                    switch (m.getName()) {
                        case "setProperties":
                            @SuppressWarnings("unchecked")
                            Dictionary<String, ?> d = (Dictionary<String, ?>) args[0];
                            r.props = d;
                            return null;
                        case "unregister":
                            if (r.unregistered) {
                                throw new IllegalStateException("already unregistered");
                            }
                            r.unregistered = true;
                            return null;
                        default:
                            throw new UnsupportedOperationException(m.getName());
                    }
                });
    }

    private static DisniProviderComponent.Config config(String path, long pollMs, int cmMs) {
        return config(path, pollMs, cmMs, 1);
    }

    private static DisniProviderComponent.Config config(String path, long pollMs, int cmMs, int completionThreads) {
        return config(path, pollMs, cmMs, completionThreads, "auto");
    }

    private static DisniProviderComponent.Config config(String path, long pollMs, int cmMs, int completionThreads,
                                                        String windows) {
        Map<String, Object> values = new ConcurrentHashMap<>(Map.of("sysfs_path", path, "poll_interval_ms", pollMs,
                "cm_timeout_ms", cmMs, "completion_threads", completionThreads, "memory_windows", windows));
        return (DisniProviderComponent.Config) Proxy.newProxyInstance(DisniProviderComponentTest.class.getClassLoader(),
                new Class<?>[] {DisniProviderComponent.Config.class}, (proxy, m, args) -> {
                    if (m.getName().equals("annotationType")) {
                        return (Class<? extends Annotation>) DisniProviderComponent.Config.class;
                    }
                    return values.get(m.getName());
                });
    }

    @Test
    void withoutAdapterTheStatusServiceSaysDormantAndWhy() throws Exception {
        DisniProviderComponent c = new DisniProviderComponent(context(), config(sysfs.toString(), 50, 2000));
        Reg status = regs.get(0);
        assertEquals(Supplier.class.getName(), status.clazz);
        assertEquals("disni", status.props.get("rdma.provider"));
        assertEquals(Boolean.TRUE, status.props.get("rdma.provider.status"));
        String reason = "no RDMA adapter under " + sysfs;
        Await.until("the first scan", () -> reason.equals(status.props.get("rdma.provider.reason")));
        assertEquals("dormant", status.props.get("rdma.provider.state"));
        assertEquals(reason, c.dormantReason());
        @SuppressWarnings("unchecked")
        Supplier<String> line = (Supplier<String>) status.service;
        assertEquals("dormant: " + reason, line.get());
        assertEquals(1, regs.size(), "no device service");

        c.deactivate();
        assertTrue(status.unregistered);
        // the executor is terminated when deactivate returns; its thread exits right after
        Await.until("the scan thread to exit",
                () -> Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.getName().equals("rdma-disni-scan")));
    }

    @Test
    void badConfigurationFailsActivation() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new DisniProviderComponent(context(), config(sysfs.toString(), 0, 2000)));
        assertTrue(e.getMessage().contains("poll.interval.ms"), e.getMessage());
        assertTrue(regs.isEmpty());
    }

    @Test
    void completionThreadsOutOfRangeFailActivationAndSayTheRange() {
        for (int bad : new int[] {0, -1, 65}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new DisniProviderComponent(context(), config(sysfs.toString(), 50, 2000, bad)));
            assertEquals("completion.threads must be 1-64: " + bad, e.getMessage());
        }
        assertTrue(regs.isEmpty(), "nothing registered by a refused configuration");
    }

    @Test
    void memoryWindowsOtherThanAutoOnOrOffFailActivationAndSayTheChoices() {
        for (String bad : new String[] {"yes", "", "offf"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new DisniProviderComponent(context(), config(sysfs.toString(), 50, 2000, 1, bad)));
            assertEquals("memory.windows must be auto, on or off: " + bad, e.getMessage());
        }
        assertTrue(regs.isEmpty(), "nothing registered by a refused configuration");
    }
}

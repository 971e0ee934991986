package io.rnbd.rdma.soft.internal.osgi;

import java.util.ArrayList;
import java.util.Collections;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RdmaException;

import org.junit.jupiter.api.Test;
import org.osgi.framework.FrameworkUtil;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

import java.lang.reflect.Proxy;
import java.util.Dictionary;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

class SoftLinkAdminComponentTest {
    /** An in-memory ConfigurationAdmin: just enough of named factory configurations. */
    private final Map<String, Hashtable<String, Object>> store = new TreeMap<>();

    private Configuration config(String pid) {
        return (Configuration) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Configuration.class},
                (proxy, m, args) -> {
                    switch (m.getName()) {
                        case "getPid":
                            return pid;
                        case "getProperties":
                            return store.get(pid);
                        case "update":
                            @SuppressWarnings("unchecked")
                            Dictionary<String, Object> d = (Dictionary<String, Object>) args[0];
                            Hashtable<String, Object> copy = new Hashtable<>();
                            for (String k : Collections.list(d.keys())) {
                                copy.put(k, d.get(k));
                            }
                            copy.put("service.pid", pid);
                            copy.put("service.factoryPid", pid.substring(0, pid.indexOf('~')));
                            store.put(pid, copy);
                            return null;
                        case "delete":
                            store.remove(pid);
                            return null;
                        default:
                            throw new UnsupportedOperationException(m.getName());
                    }
                });
    }

    private final ConfigurationAdmin configAdmin = (ConfigurationAdmin) Proxy.newProxyInstance(
            getClass().getClassLoader(), new Class<?>[] {ConfigurationAdmin.class}, (proxy, m, args) -> {
                switch (m.getName()) {
                    case "getFactoryConfiguration":
                        return config(args[0] + "~" + args[1]);
                    case "listConfigurations":
                        var filter = FrameworkUtil.createFilter((String) args[0]);
                        List<Configuration> found = new ArrayList<>();
                        for (Map.Entry<String, Hashtable<String, Object>> e : store.entrySet()) {
                            if (filter.matches(new HashMap<>(e.getValue()))) {
                                found.add(config(e.getKey()));
                            }
                        }
                        return found.isEmpty() ? null : found.toArray(new Configuration[0]);
                    default:
                        throw new UnsupportedOperationException(m.getName());
                }
            });

    /** The provider as the admin sees it: a link's device is up once its configuration exists (after {@link #lag} polls). */
    private int lag;
    private final List<String> polled = new ArrayList<>();
    private long fakeNanos;

    private boolean registered(String name) {
        polled.add(name);
        boolean configured = store.values().stream().anyMatch(p -> name.equals(p.get("name")));
        if (lag > 0) {
            lag--;
            return !configured;
        }
        return configured;
    }

    private final SoftLinkAdminComponent admin = new SoftLinkAdminComponent(configAdmin, this::registered,
            () -> fakeNanos, ms -> fakeNanos += ms * 1_000_000);

    @Test
    void addCreatesANamedFactoryConfigurationAndDeleteRemovesIt() throws Exception {
        admin.addLink("soft1", "127.0.0.2");
        admin.addLink("soft0", " 127.0.0.1 ");
        assertEquals(List.of("soft0", "soft1"), admin.links());
        Hashtable<String, Object> props = store.get("io.rnbd.rdma.soft~soft1");
        assertEquals("soft1", props.get("name"));
        assertEquals("127.0.0.2", props.get("address"));
        admin.deleteLink("soft1");
        assertEquals(List.of("soft0"), admin.links());
        assertEquals("soft", admin.provider());
    }

    @Test
    void badInputGetsClearErrors() throws Exception {
        admin.addLink("soft0", "127.0.0.1");
        assertEquals(Errno.EEXIST, assertThrows(RdmaException.class, () -> admin.addLink("soft0", "127.0.0.2")).errno());
        assertEquals(Errno.EINVAL, assertThrows(RdmaException.class, () -> admin.addLink("x", "nonsense")).errno());
        assertEquals(Errno.EINVAL, assertThrows(RdmaException.class, () -> admin.addLink("a)(b", "127.0.0.1")).errno());
        assertEquals(Errno.EADDRNOTAVAIL,
                assertThrows(RdmaException.class, () -> admin.addLink("far", "192.0.2.7")).errno());
        RdmaException missing = assertThrows(RdmaException.class, () -> admin.deleteLink("nope"));
        assertEquals(Errno.ENOENT, missing.errno());
        assertEquals("ENOENT: no link named nope", missing.getMessage());
        assertEquals(List.of("soft0"), admin.links());
    }

    @Test
    void addAndDeleteReturnOnlyOnceTheDeviceCameOrWent() throws Exception {
        lag = 3;   // ConfigAdmin delivers on its own thread: the device shows up three polls late
        admin.addLink("soft0", "127.0.0.1");
        assertEquals(List.of("soft0", "soft0", "soft0", "soft0"), polled, "polled until the device was there");
        assertEquals(3 * 10_000_000L, fakeNanos);
        polled.clear();
        lag = 2;
        admin.deleteLink("soft0");
        assertEquals(3, polled.size(), "polled until the device was gone");
    }

    @Test
    void aDeviceThatNeverComesUpIsNotLeftHalfAdded() throws Exception {
        lag = Integer.MAX_VALUE;
        RdmaException e = assertThrows(RdmaException.class, () -> admin.addLink("soft0", "127.0.0.1"));
        assertEquals(Errno.ETIMEDOUT, e.errno());
        assertEquals("ETIMEDOUT: link soft0 not added: its device did not come up within 10 s (see the log: address in use?)",
                e.getMessage());
        assertEquals(SoftLinkAdminComponent.SETTLE_MS * 1_000_000, fakeNanos, "gave up after the settle time, no later");
        assertEquals(List.of(), admin.links(), "the configuration was rolled back");
    }

    @Test
    void aDeviceThatDoesNotGoIsReported() throws Exception {
        admin.addLink("soft0", "127.0.0.1");
        lag = Integer.MAX_VALUE;
        RdmaException e = assertThrows(RdmaException.class, () -> admin.deleteLink("soft0"));
        assertEquals(Errno.ETIMEDOUT, e.errno());
        assertEquals(List.of(), admin.links(), "the configuration is gone all the same");
    }
}

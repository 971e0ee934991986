package io.rnbd.rdma.soft.internal.osgi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.LinkState;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;

import org.junit.jupiter.api.Test;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Dictionary;
import java.util.List;

class SoftDeviceComponentTest {
    private final List<String> events = new ArrayList<>();
    private RdmaDevice registered;
    private Dictionary<?, ?> properties;

    /** A BundleContext that records registerService/unregister and the device's state at unregister. */
    private final BundleContext context = (BundleContext) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {BundleContext.class}, (proxy, m, args) -> {
                if (!m.getName().equals("registerService") || !(args[0] instanceof Class)) {
                    throw new UnsupportedOperationException(m.getName());
                }
                registered = (RdmaDevice) args[1];
                properties = (Dictionary<?, ?>) args[2];
                events.add("register");
                return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {ServiceRegistration.class},
                        (p, rm, ra) -> {
                            if (!rm.getName().equals("unregister")) {
                                throw new UnsupportedOperationException(rm.getName());
                            }
                            events.add("unregister while " + registered.linkState());
                            return null;
                        });
            });

    private static SoftDeviceComponent.Config config(String name, String address) {
        return config(name, address, 1);
    }

    private static SoftDeviceComponent.Config config(String name, String address, int ioThreads) {
        return config(name, address, ioThreads, 0);
    }

    private static SoftDeviceComponent.Config config(String name, String address, int ioThreads, int pollUsec) {
        return (SoftDeviceComponent.Config) Proxy.newProxyInstance(SoftDeviceComponentTest.class.getClassLoader(),
                new Class<?>[] {SoftDeviceComponent.Config.class}, (p, m, a) -> {
                    switch (m.getName()) {
                        case "name":
                            return name;
                        case "address":
                            return address;
                        case "io_threads":
                            return ioThreads;
                        case "poll_usec":
                            return pollUsec;
                        default:
                            if (m.getDefaultValue() != null) {
                                return m.getDefaultValue();
                            }
                            throw new UnsupportedOperationException(m.getName());
                    }
                });
    }

    @Test
    void registersTheDeviceAndUnregistersItBeforeClosingIt() throws Exception {
        SoftDeviceComponent c = new SoftDeviceComponent(context, config("softc", "127.0.0.1"));
        assertEquals("softc", properties.get(RdmaDevice.PROP_NAME));
        assertEquals("soft", properties.get(RdmaDevice.PROP_PROVIDER));
        assertEquals("127.0.0.1", properties.get("rdma.address"));
        assertEquals(LinkState.ACTIVE, registered.linkState());
        c.deactivate();
        assertEquals(List.of("register", "unregister while ACTIVE"), events);
        assertEquals(LinkState.DOWN, registered.linkState());
    }

    @Test
    void invalidOrDuplicateConfigurationFailsActivation() throws Exception {
        assertEquals(Errno.EINVAL, assertThrows(RdmaException.class,
                () -> new SoftDeviceComponent(context, config("x", "not-an-ip"))).errno());
        assertEquals(Errno.EADDRNOTAVAIL, assertThrows(RdmaException.class,
                () -> new SoftDeviceComponent(context, config("x", "192.0.2.9"))).errno());
        assertEquals(Errno.EINVAL, assertThrows(RdmaException.class,
                () -> new SoftDeviceComponent(context, config("x", "127.0.0.1", 0))).errno());
        assertEquals(Errno.EINVAL, assertThrows(RdmaException.class,
                () -> new SoftDeviceComponent(context, config("x", "127.0.0.1", 1, -5))).errno());
        SoftDeviceComponent first = new SoftDeviceComponent(context, config("dup", "127.0.0.1"));
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new SoftDeviceComponent(context, config("dup", "127.0.0.2")));
            assertTrue(e.getMessage().contains("already in use"), e.getMessage());
        } finally {
            first.deactivate();
        }
        // the failed activations released the name
        new SoftDeviceComponent(context, config("x", "127.0.0.1")).deactivate();
    }
}

package io.rnbd.rnbd.client.internal.osgi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.testkit.cm.FakeConfigAdmin;
import java.lang.annotation.Annotation;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;

/**
 * The size refresh's thread: there while the component is, gone when it stops; settings
 * change in place. The admin service goes before the client closes.
 */
class RnbdClientComponentTest {
    private final List<String> events = new ArrayList<>();
    private Object registered;

    /** A BundleContext that records registerService/unregister, and the admin's mappings at unregister. */
    private final BundleContext context = (BundleContext) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {BundleContext.class}, (proxy, m, args) -> {
                if (!m.getName().equals("registerService") || !(args[0] instanceof Class<?> type)) {
                    throw new UnsupportedOperationException(m.getName());
                }
                registered = args[1];
                events.add("register " + type.getSimpleName());
                return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {ServiceRegistration.class},
                        (p, rm, ra) -> {
                            if (!rm.getName().equals("unregister")) {
                                throw new UnsupportedOperationException(rm.getName());
                            }
                            events.add("unregister " + type.getSimpleName() + " with "
                                    + ((RnbdClientAdmin) registered).devices().size() + " mapped");
                            return null;
                        });
            });

    private static RnbdClientComponent.Config refresh(long ms) {
        return new RnbdClientComponent.Config() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return RnbdClientComponent.Config.class;
            }

            @Override
            public long size_refresh_ms() {
                return ms;
            }

            @Override
            public long ha_io_timeout_ms() {
                return 30_000;
            }
        };
    }

    private static long timerThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().equals("rnbd-client-timer")).count();
    }

    @Test
    void theRefreshThreadLivesWithTheComponentAndASettingChangeKeepsIt() throws Exception {
        long before = timerThreads();
        RnbdClientComponent c = new RnbdClientComponent(context, refresh(5000), new FakeConfigAdmin());
        assertEquals(before + 1, timerThreads());
        c.modified(refresh(0)); // in place: nothing is unmapped, the thread stays for a later setting
        c.modified(refresh(1000));
        assertThrows(IllegalArgumentException.class, () -> c.modified(refresh(-5)));
        c.deactivate();
        assertEquals(before, timerThreads(), "thread left after deactivate");
    }

    @Test
    void aNegativeRefreshFailsActivation() {
        long before = timerThreads();
        assertThrows(IllegalArgumentException.class, () -> new RnbdClientComponent(context, refresh(-1), new FakeConfigAdmin()));
        assertTrue(events.isEmpty(), events.toString());
        assertEquals(before, timerThreads(), "thread left after a failed activation");
    }

    /**
     * No component between the console and the client: the service is the client's admin face,
     * registered by this component, whose run-time calls go straight to the RnbdClient.
     */
    @Test
    void theAdminServiceIsTheClientsFaceAndGoesBeforeItCloses() throws Exception {
        RnbdClientComponent c = new RnbdClientComponent(context, refresh(0), new FakeConfigAdmin());
        RnbdClientAdmin admin = assertInstanceOf(ClientAdmin.class, registered);
        admin.map("rnbd0", "s1", "disk", AccessMode.RW); // waits for its session
        c.deactivate();
        assertEquals(List.of("register RnbdClientAdmin", "unregister RnbdClientAdmin with 1 mapped"), events);
        assertTrue(admin.devices().isEmpty(), "closed after");
    }
}

package io.rnbd.rtrs.client.internal.osgi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import io.rnbd.common.Errno;
import io.rnbd.common.Provider;
import io.rnbd.rtrs.api.RtrsAdminException;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.client.internal.RtrsClient;
import io.rnbd.testkit.cm.FakeConfigAdmin;
import java.io.IOException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * rtrs:auth-method client and JMX's setAuthMethod, as the admin service owns them: a registered
 * authenticator by its name into auth.method of the client's configuration (its other settings
 * kept), default removes it, anything else is EINVAL and writes nothing, no ConfigAdmin is
 * said so. The client is the real one, told which authenticators are registered.
 */
class ClientAdminTest {
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final RtrsClient client = new RtrsClient(timer, System::nanoTime);
    private final FakeConfigAdmin ca = new FakeConfigAdmin();
    private FakeConfigAdmin present = ca;
    private final ClientAdmin admin = new ClientAdmin(client, () -> present);

    {
        client.authenticators(List.of(new Provider("none", "rtrs-auth-none", "0.1.0.SNAPSHOT", 40, 0),
                new Provider("ticket", "org.example.rnbd.auth.ticket", "1.0.0", 93, 0)));
    }

    @AfterEach
    void close() {
        client.close();
        timer.shutdownNow();
    }

    @Test
    void aRegisteredMethodGoesIntoTheClientsConfigurationWithItsOtherSettingsKept() throws IOException {
        ca.getConfiguration(ClientAdmin.PID, null).update(new java.util.Hashtable<>(Map.of("x", "y")));
        assertEquals("client: new paths authenticate with ticket", admin.setAuthMethod("ticket"));
        FakeConfigAdmin.Conf c = ca.singleton(ClientAdmin.PID);
        assertEquals("ticket", c.get("auth.method"));
        assertEquals("y", c.get("x"), "its other settings kept");
        assertEquals("io.rnbd.rtrs.client", ClientAdmin.PID, "the PID RtrsClientComponent reads");
    }

    @Test
    void defaultRemovesTheMethod() throws IOException {
        admin.setAuthMethod("none");
        assertEquals("client: new paths authenticate with the best-ranked authenticator present",
                admin.setAuthMethod("default"));
        assertNull(ca.singleton(ClientAdmin.PID).get("auth.method"));
    }

    @Test
    void anUnregisteredMethodIsEinvalNamingThoseRegisteredAndWritesNothing() {
        RtrsAdminException e = assertThrows(RtrsAdminException.class, () -> admin.setAuthMethod("chap"));
        assertEquals(Errno.EINVAL, e.errno());
        assertEquals("EINVAL: unknown authenticator 'chap' (registered: none, ticket; or default)", e.getMessage());
        assertEquals(Errno.EINVAL, assertThrows(RtrsAdminException.class, () -> admin.setAuthMethod(null)).errno());
        assertEquals(Errno.EINVAL, assertThrows(RtrsAdminException.class, () -> admin.setAuthMethod("")).errno());
        assertEquals(List.of(), ca.configs, "nothing written");
    }

    @Test
    void noAuthenticatorRegisteredLeavesOnlyDefault() throws IOException {
        client.authenticators(List.of());
        assertEquals("EINVAL: unknown authenticator 'none' (none registered; or default)",
                assertThrows(RtrsAdminException.class, () -> admin.setAuthMethod("none")).getMessage());
        admin.setAuthMethod("default");
        assertNull(ca.singleton(ClientAdmin.PID).get("auth.method"));
    }

    @Test
    void withoutConfigAdminItSaysSoAndChangesNothing() {
        present = null;
        RtrsAdminException e = assertThrows(RtrsAdminException.class, () -> admin.setAuthMethod("ticket"));
        assertEquals(Errno.EAGAIN, e.errno());
        assertEquals("EAGAIN: ConfigAdmin is not running (feature config), so the method cannot be kept; nothing was "
                + "changed", e.getMessage());
        assertEquals("", client.authMethod());
    }

    /** A method of the interface it does not forward would answer with the interface's default, not the client's. */
    @Test
    void everyMethodOfTheAdminIsTheClientsOrItsOwn() {
        List<String> missing = new ArrayList<>();
        for (Method m : RtrsClientAdmin.class.getMethods()) {
            try {
                ClientAdmin.class.getDeclaredMethod(m.getName(), m.getParameterTypes());
            } catch (NoSuchMethodException e) {
                missing.add(m.getName());
            }
        }
        if (!missing.isEmpty()) {
            fail("ClientAdmin does not forward " + missing);
        }
    }
}

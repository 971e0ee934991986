package io.rnbd.rtrs.server.internal.osgi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.RtrsAdminException;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.rtrs.api.RtrsServerSessionInfo;
import io.rnbd.testkit.cm.FakeConfigAdmin;
import java.io.IOException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * rtrs:auth-method server and JMX's setAuthMethod, as the admin service owns them: the name of
 * an authenticator registered on this server into auth.method of its configuration (the port
 * and the rest kept), default removes it, anything else is EINVAL and writes nothing, no
 * ConfigAdmin is said so.
 */
class ServerAdminTest {
    private final FakeConfigAdmin ca = new FakeConfigAdmin();
    private FakeConfigAdmin present = ca;
    private List<String> registered = List.of("chap", "none");
    private final RtrsServerAdmin server = new RtrsServerAdmin() {
        @Override
        public List<RtrsServerSessionInfo> sessions() {
            return List.of();
        }

        @Override
        public boolean closeSession(String name) {
            return name.equals("s1");
        }

        @Override
        public String authMethod() {
            return "chap";
        }
    };
    private final ServerAdmin admin = new ServerAdmin(server, () -> registered, () -> present);

    @Test
    void aRegisteredMethodGoesIntoTheServersConfigurationWithItsOtherSettingsKept() throws IOException {
        ca.getConfiguration(ServerAdmin.PID, null).update(new Hashtable<>(Map.of("port", "1234")));
        assertEquals("server: new paths must pass none; established paths keep running", admin.setAuthMethod("none"));
        assertEquals("none", ca.singleton(ServerAdmin.PID).get("auth.method"));
        assertEquals("1234", ca.singleton(ServerAdmin.PID).get("port"), "its other settings kept");
        assertEquals("io.rnbd.rtrs.server", ServerAdmin.PID, "the PID RtrsServerComponent reads");
    }

    @Test
    void defaultRemovesTheMethod() throws IOException {
        admin.setAuthMethod("chap");
        assertEquals("server: new paths must pass the best-ranked authenticator present; established paths keep "
                + "running", admin.setAuthMethod("default"));
        assertNull(ca.singleton(ServerAdmin.PID).get("auth.method"));
    }

    @Test
    void aMethodNotRegisteredOnTheServerIsEinvalAndWritesNothing() {
        registered = List.of("none");
        RtrsAdminException e = assertThrows(RtrsAdminException.class, () -> admin.setAuthMethod("chap"));
        assertEquals(Errno.EINVAL, e.errno());
        assertEquals("EINVAL: unknown authenticator 'chap' (registered: none; or default)", e.getMessage());
        assertEquals(List.of(), ca.configs, "nothing written");
    }

    @Test
    void withoutConfigAdminItSaysSo() {
        present = null;
        RtrsAdminException e = assertThrows(RtrsAdminException.class, () -> admin.setAuthMethod("none"));
        assertEquals(Errno.EAGAIN, e.errno());
        assertEquals("EAGAIN: ConfigAdmin is not running (feature config), so the method cannot be kept; nothing was "
                + "changed", e.getMessage());
    }

    @Test
    void theRestIsTheServers() {
        assertEquals("chap", admin.authMethod());
        assertEquals(true, admin.closeSession("s1"));
        List<String> missing = new ArrayList<>();
        for (Method m : RtrsServerAdmin.class.getMethods()) {
            try {
                ServerAdmin.class.getDeclaredMethod(m.getName(), m.getParameterTypes());
            } catch (NoSuchMethodException e) {
                missing.add(m.getName());
            }
        }
        if (!missing.isEmpty()) {
            fail("ServerAdmin does not forward " + missing);
        }
    }
}

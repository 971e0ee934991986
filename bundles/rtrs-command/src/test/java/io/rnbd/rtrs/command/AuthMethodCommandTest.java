package io.rnbd.rtrs.command;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.command.support.MiniJson;
import io.rnbd.command.support.Out;
import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.RtrsAdminException;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.rtrs.api.RtrsServerSessionInfo;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * rtrs:auth-method: shows both ends; sets an end's method through that end's admin service
 * (which checks the name and keeps it: RtrsClientAdmin/RtrsServerAdmin.setAuthMethod), printing
 * its line or its refusal.
 */
class AuthMethodCommandTest {
    private final FakeClientAdmin fake = new FakeClientAdmin();
    /** What the admin services were asked to set, "end method". */
    private final List<String> calls = new ArrayList<>();
    private IOException refusal;

    /** The fake client, whose setAuthMethod records and answers (or refuses). */
    private final RtrsClientAdmin admin = (RtrsClientAdmin) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {RtrsClientAdmin.class}, (p, m, a) -> {
                if (m.getName().equals("setAuthMethod")) {
                    return set("client", (String) a[0]);
                }
                try {
                    return m.invoke(fake, a);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            });

    private RtrsServerAdmin server = new RtrsServerAdmin() {
        @Override
        public List<RtrsServerSessionInfo> sessions() {
            return List.of();
        }

        @Override
        public boolean closeSession(String name) {
            return false;
        }

        @Override
        public String authMethod() {
            return "none";
        }

        @Override
        public String setAuthMethod(String method) throws IOException {
            return set("server", method);
        }
    };

    private String set(String end, String method) throws IOException {
        calls.add(end + " " + method);
        if (refusal != null) {
            throw refusal;
        }
        return end + ": set to " + method;
    }

    private String run(String end, String method, boolean json) {
        AuthMethodCommand c = new AuthMethodCommand();
        c.admin = admin;
        c.server = server;
        c.end = end;
        c.method = method;
        c.json = json;
        return Out.run(c);
    }

    @Test
    void showsWhatEachEndUses() {
        assertEquals("client: none (no authenticator present: paths are not authenticated)\nserver: none\n",
                run(null, null, false));
        assertEquals(Map.of("client", "", "server", "none"), MiniJson.object(run(null, null, true)));
        assertEquals("server: none\n", run("server", null, false));
        assertEquals(List.of(), calls);
    }

    @Test
    void setsAnEndThroughItsAdminServiceAndPrintsItsLine() {
        assertEquals("client: set to ticket\n", run("client", "ticket", false));
        assertEquals("server: set to default\n", run("server", "default", false));
        assertEquals(List.of("client ticket", "server default"), calls);
    }

    @Test
    void theServicesRefusalIsOneErrorLineErrnoFirst() {
        refusal = new RtrsAdminException(Errno.EINVAL, "unknown authenticator 'chap' (registered: none; or default)");
        assertEquals("Error: EINVAL: unknown authenticator 'chap' (registered: none; or default)\n",
                run("client", "chap", false));
        server = null;
        assertEquals("Error: the RTRS server is not running (bundle rtrs-server)\n", run("server", "none", false));
    }

    @Test
    void anUnknownOrMissingEndIsRefusedBeforeAnyServiceIsAsked() {
        assertEquals("Error: end must be client or server, not 'both'\n", run("both", "none", false));
        assertEquals("Error: say which end: rtrs:auth-method client|server none\n", run(null, "none", false));
        assertEquals(List.of(), calls);
    }
}

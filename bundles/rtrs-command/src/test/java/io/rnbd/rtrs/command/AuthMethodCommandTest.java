package io.rnbd.rtrs.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.rnbd.command.support.MiniJson;
import io.rnbd.command.support.Out;
import io.rnbd.common.Provider;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.rtrs.api.RtrsServerSessionInfo;
import java.lang.reflect.Proxy;
import java.util.Dictionary;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/** rtrs:auth-method: shows both ends; sets an end's auth.method to a registered authenticator by its name. */
class AuthMethodCommandTest {
    private final FakeClientAdmin admin = new FakeClientAdmin();
    /** The configurations by PID, as ConfigAdmin keeps them. */
    private final Map<String, Dictionary<String, Object>> configs = new HashMap<>();

    private final ConfigurationAdmin ca = (ConfigurationAdmin) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {ConfigurationAdmin.class}, (p, m, a) -> {
                if (!m.getName().equals("getConfiguration")) {
                    throw new UnsupportedOperationException(m.getName());
                }
                String pid = (String) a[0];
                return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Configuration.class},
                        (cp, cm, ca) -> switch (cm.getName()) {
                            case "getProperties" -> configs.containsKey(pid) ? new Hashtable<>((Map<?, ?>) configs.get(pid))
                                    : null;
                            case "update" -> configs.put(pid, copy(ca[0]));
                            default -> throw new UnsupportedOperationException(cm.getName());
                        });
            });

    @SuppressWarnings("unchecked")
    private static Dictionary<String, Object> copy(Object d) {
        return new Hashtable<>((Map<String, Object>) (Map<?, ?>) d);
    }

    private final RtrsServerAdmin server = new RtrsServerAdmin() {
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
    };

    private String run(String end, String method, boolean json) {
        AuthMethodCommand c = new AuthMethodCommand();
        c.admin = admin;
        c.server = server;
        c.configAdmin = ca;
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
    }

    @Test
    void setsAnEndToARegisteredAuthenticatorByItsNameAndBackToTheDefault() {
        admin.authenticators.add(new Provider("none", "rtrs-auth-none", "0.1.0.SNAPSHOT", 40, 0));
        admin.authenticators.add(new Provider("ticket", "org.example.rnbd.auth.ticket", "1.0.0", 93, 0));
        configs.put(AuthMethodCommand.SERVER_PID, new Hashtable<>(Map.of("port", "1234")));

        assertEquals("client: new paths authenticate with ticket\n", run("client", "ticket", false));
        assertEquals("ticket", configs.get(AuthMethodCommand.CLIENT_PID).get("auth.method"));
        assertEquals("server: new paths must pass ticket; the RTRS server restarts to apply it, its sessions' paths "
                + "reconnect and their IO waits meanwhile\n", run("server", "ticket", false));
        assertEquals("1234", configs.get(AuthMethodCommand.SERVER_PID).get("port"), "its other settings kept");
        assertEquals("ticket", configs.get(AuthMethodCommand.SERVER_PID).get("auth.method"));

        assertEquals("client: new paths authenticate with the best-ranked authenticator present\n",
                run("client", "default", false));
        assertNull(configs.get(AuthMethodCommand.CLIENT_PID).get("auth.method"));
    }

    @Test
    void anUnknownMethodOrEndIsRefusedAndNothingIsWritten() {
        admin.authenticators.add(new Provider("none", "rtrs-auth-none", "0.1.0.SNAPSHOT", 40, 0));
        assertEquals("Error: unknown authenticator 'chap' (registered: none; or default)\n", run("client", "chap", false));
        assertEquals("Error: end must be client or server, not 'both'\n", run("both", "none", false));
        assertEquals("Error: say which end: rtrs:auth-method client|server none\n", run(null, "none", false));
        assertEquals(Map.of(), configs);
    }
}

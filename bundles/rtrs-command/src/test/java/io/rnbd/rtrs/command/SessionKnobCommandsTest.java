package io.rnbd.rtrs.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.command.support.MiniJson;
import io.rnbd.command.support.Out;
import io.rnbd.command.support.SameAsTelemetry;
import io.rnbd.common.Provider;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** rtrs:mp-policy and rtrs:max-reconnect-attempts. */
class SessionKnobCommandsTest {
    private final FakeClientAdmin admin = new FakeClientAdmin().add("blk1");

    private String policy(String session, String policy, boolean json) {
        MpPolicyCommand c = new MpPolicyCommand();
        c.admin = admin;
        c.session = session;
        c.policy = policy;
        c.json = json;
        return Out.run(c);
    }

    private String attempts(String session, String n, boolean json) {
        MaxReconnectAttemptsCommand c = new MaxReconnectAttemptsCommand();
        c.admin = admin;
        c.session = session;
        c.attempts = n;
        c.json = json;
        return Out.run(c);
    }

    @Test
    void showAndSetThePolicyByNameOrKernelNumber() {
        assertEquals("blk1: min-inflight\n", policy("blk1", null, false));
        assertEquals("blk1: round-robin\n", policy("blk1", "0", false));
        assertEquals("blk1: min-latency (not installed; using round-robin)\n", policy("blk1", "MIN-LATENCY", false));
        Map<String, Object> j = MiniJson.object(policy("blk1", null, true));
        assertEquals(Map.of("session", "blk1", "mp_policy", "min-latency", "active_mp_policy", "round-robin"), j);
        assertEquals(List.of("mp blk1 round-robin", "mp blk1 min-latency"), admin.calls);
    }

    /** Issue 34: a policy bundle of the user's own, by the name its service announces. */
    @Test
    void aRegisteredPolicyOfAnyBundleIsTakenByItsName() {
        assertEquals("Error: unknown multipath policy 'first-path' (round-robin, min-inflight, min-latency, or 0, 1, 2)\n",
                policy("blk1", "first-path", false), "not deployed: refused");
        admin.policies.add(new Provider("min-inflight", "rtrs-mp-min-inflight", "0.1.0.SNAPSHOT", 50, 0));
        admin.policies.add(new Provider("first-path", "org.example.rnbd.mp.firstpath", "1.0.0", 90, 0));
        assertEquals("blk1: first-path\n", policy("blk1", "first-path", false));
        assertEquals("blk1: first-path\n", policy("blk1", "First-Path", false), "case aside, as the kernel's");
        assertEquals(List.of("mp blk1 first-path", "mp blk1 first-path"), admin.calls);
        assertEquals("Error: unknown multipath policy 'fastest' (min-inflight, first-path, round-robin, min-latency, "
                + "or 0, 1, 2)\n", policy("blk1", "fastest", false));
    }

    @Test
    void listsThePoliciesWithTheirBundlesAndSessions() {
        admin.policies.add(new Provider("first-path", "org.example.rnbd.mp.firstpath", "1.0.0", 90, 0, List.of("blk1")));
        MpPoliciesCommand c = new MpPoliciesCommand();
        c.admin = admin;
        c.telemetry = SameAsTelemetry.over(null, admin, null, null, null);
        String out = Out.run(c);
        assertEquals(List.of(List.of("NAME", "BUNDLE", "VERSION", "ID", "RANKING", "SESSIONS"),
                List.of("first-path", "org.example.rnbd.mp.firstpath", "1.0.0", "90", "0", "blk1")), Out.cells(out), out);
        c.json = true;
        assertEquals(List.of(Map.of("name", "first-path", "bundle", "org.example.rnbd.mp.firstpath", "version", "1.0.0",
                "bundle_id", 90L, "ranking", 0L, "sessions", List.of("blk1"))), MiniJson.array(Out.run(c)));
        admin.policies.clear();
        c.json = false;
        assertEquals("no multipath policy registered: sessions use the built-in round-robin\n", Out.run(c));
    }

    @Test
    void listsTheAuthenticatorsAndWhichEndUsesThem() {
        admin.authenticators.add(new Provider("none", "rtrs-auth-none", "0.1.0.SNAPSHOT", 40, 0, List.of("client")));
        admin.authenticators.add(new Provider("chap", "rtrs-auth-chap", "0.1.0.SNAPSHOT", 41, 10));
        AuthenticatorsCommand c = new AuthenticatorsCommand();
        c.admin = admin;
        c.telemetry = SameAsTelemetry.over(null, admin, new io.rnbd.rtrs.api.RtrsServerAdmin() {
            @Override
            public List<io.rnbd.rtrs.api.RtrsServerSessionInfo> sessions() {
                return List.of();
            }

            @Override
            public boolean closeSession(String name) {
                return false;
            }

            @Override
            public String authMethod() {
                return "chap";
            }
        }, null, null);
        String out = Out.run(c);
        assertEquals(List.of("none", "rtrs-auth-none", "0.1.0.SNAPSHOT", "40", "0", "client"), Out.row(out, "none"), out);
        assertEquals(List.of("chap", "rtrs-auth-chap", "0.1.0.SNAPSHOT", "41", "10", "server"), Out.row(out, "chap"), out);
        c.json = true;
        assertEquals(List.of("server"), MiniJson.array(Out.run(c)).get(1).get("used_by"));
    }

    @Test
    void badPolicyOrSessionIsOneLineAndChangesNothing() {
        assertEquals("Error: unknown multipath policy 'fastest' (round-robin, min-inflight, min-latency, or 0, 1, 2)\n",
                policy("blk1", "fastest", false));
        assertTrue(policy("blk1", "3", false).startsWith("Error: unknown multipath policy '3'"));
        assertEquals("Error: no session 'zz' (sessions: blk1)\n", policy("zz", "0", false));
        assertTrue(admin.calls.isEmpty(), admin.calls.toString());
    }

    @Test
    void showAndSetMaxReconnectAttempts() {
        assertEquals("blk1: -1 (forever)\n", attempts("blk1", null, false));
        assertEquals("blk1: 9999\n", attempts("blk1", "9999", false));
        assertEquals(Map.of("session", "blk1", "max_reconnect_attempts", 9999L),
                MiniJson.object(attempts("blk1", null, true)));
        assertEquals("blk1: 0\n", attempts("blk1", " 0 ", false));
    }

    @Test
    void outOfRangeOrNonNumericAttemptsAreRefused() {
        for (String bad : List.of("-2", "10000", "many", "1.5", "")) {
            assertEquals("Error: max reconnect attempts must be -1 (forever) or 0..9999, not '" + bad + "'\n",
                    attempts("blk1", bad, false));
        }
        assertTrue(admin.calls.isEmpty(), admin.calls.toString());
    }
}

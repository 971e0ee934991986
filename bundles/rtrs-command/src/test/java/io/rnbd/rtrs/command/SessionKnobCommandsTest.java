package io.rnbd.rtrs.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.command.support.MiniJson;
import io.rnbd.command.support.Out;
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

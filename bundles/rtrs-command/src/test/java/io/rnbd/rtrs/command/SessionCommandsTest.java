package io.rnbd.rtrs.command;

import static io.rnbd.rtrs.command.FakeClientAdmin.path;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.MiniJson;
import io.rnbd.command.support.Out;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.api.SessionState;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** rtrs:sessions, rtrs:paths, rtrs:stats. */
class SessionCommandsTest {
    private final FakeClientAdmin admin = new FakeClientAdmin()
            .add("blk1", path("10.0.0.1", "10.0.0.2", PathState.CONNECTED, 10),
                    path("10.0.1.1", "10.0.1.2", PathState.RECONNECTING, 0))
            .put(new RtrsClientSessionInfo("bad\"name", SessionState.FAILED, 129, 128, "min-latency", "round-robin",
                    3, List.of()));

    private <T extends ConsoleCommand> T with(T c) {
        if (c instanceof SessionsCommand s) {
            s.admin = admin;
        } else if (c instanceof PathsCommand p) {
            p.admin = admin;
        } else if (c instanceof StatsCommand st) {
            st.admin = admin;
        }
        return c;
    }

    @Test
    void sessionsTableShowsStateConnectedPathsPolicyAndError() {
        String out = Out.run(with(new SessionsCommand()));
        List<String> lines = out.lines().toList();
        assertEquals(3, lines.size(), out);
        assertTrue(lines.get(0).startsWith("SESSION"), out);
        assertTrue(lines.get(1).matches("bad\"name\\s+failed\\s+0/0\\s+128\\s+min-latency \\(using round-robin\\)"
                + "\\s+3\\s+EKEYREJECTED \\(129\\)"), out);
        assertTrue(lines.get(2).matches("blk1\\s+connected\\s+1/2\\s+512\\s+min-inflight\\s+-1"), out);
    }

    @Test
    void sessionsJsonParsesBackWithPathsAndEscapedNames() {
        SessionsCommand c = with(new SessionsCommand());
        c.json = true;
        List<Map<String, Object>> sessions = MiniJson.array(Out.run(c));
        assertEquals("bad\"name", sessions.get(0).get("name"));
        assertEquals("FAILED", sessions.get(0).get("state"));
        assertEquals("round-robin", sessions.get(0).get("active_mp_policy"));
        Map<String, Object> blk1 = sessions.get(1);
        assertEquals(-1L, blk1.get("max_reconnect_attempts"));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> paths = (List<Map<String, Object>>) blk1.get("paths");
        assertEquals("10.0.0.1@10.0.0.2", paths.get(0).get("name"));
        assertEquals("soft0", paths.get(0).get("hca_name"));
        @SuppressWarnings("unchecked")
        Map<String, Object> stats = (Map<String, Object>) paths.get(0).get("stats");
        assertEquals(40960L, stats.get("read_bytes"));
    }

    @Test
    void withoutTheClientEveryClientCommandSaysSoInOneLine() {
        for (ConsoleCommand c : List.of(new SessionsCommand(), new PathsCommand(), new StatsCommand())) {
            assertEquals("Error: the RTRS client is not running (bundle rtrs-client)\n", Out.run(c));
        }
    }

    @Test
    void pathsOfOneSessionOrAll() {
        PathsCommand c = with(new PathsCommand());
        c.session = "blk1";
        String out = Out.run(c);
        assertEquals(3, out.lines().count(), out);
        assertTrue(out.contains("10.0.1.1@10.0.1.2  reconnecting"), out);
        assertTrue(out.contains("10.0.0.1@10.0.0.2  connected     soft0"), out);

        PathsCommand all = with(new PathsCommand());
        all.json = true;
        List<Map<String, Object>> paths = MiniJson.array(Out.run(all));
        assertEquals(2, paths.size());
        assertEquals("blk1", paths.get(1).get("session"));
        assertEquals("RECONNECTING", paths.get(1).get("state"));
    }

    @Test
    void unknownSessionIsOneLineNamingTheKnownOnes() {
        PathsCommand c = with(new PathsCommand());
        c.session = "nope";
        assertEquals("Error: no session 'nope' (sessions: bad\"name, blk1)\n", Out.run(c));
        StatsCommand s = with(new StatsCommand());
        s.session = "nope";
        s.reset = true;
        assertTrue(Out.run(s).startsWith("Error: no session 'nope'"));
        assertTrue(admin.calls.isEmpty(), admin.calls.toString());
    }

    @Test
    void statsTableAndJson() {
        StatsCommand c = with(new StatsCommand());
        c.session = "blk1";
        String out = Out.run(c);
        List<String> lines = out.lines().toList();
        assertEquals(3, lines.size(), out);
        assertTrue(lines.get(0).contains("RECONNECTS OK/FAILED"), out);
        assertTrue(lines.get(1).matches("blk1\\s+10.0.0.1@10.0.0.2\\s+10\\s+40960\\s+2\\s+8192\\s+1\\s+3\\s+4/5"
                + "\\s+12.3\\s+67.9"), out);

        StatsCommand j = with(new StatsCommand());
        j.json = true;
        List<Map<String, Object>> rows = MiniJson.array(Out.run(j));
        assertEquals(2, rows.size());
        @SuppressWarnings("unchecked")
        Map<String, Object> st = (Map<String, Object>) rows.get(0).get("stats");
        assertEquals(12_345L, st.get("hb_rtt_ns"));
        assertEquals(4L, st.get("reconnects_ok"));
    }

    @Test
    void statsResetOneOrEverySession() {
        StatsCommand c = with(new StatsCommand());
        c.reset = true;
        assertEquals("bad\"name: counters reset\nblk1: counters reset\n", Out.run(c));
        assertEquals(List.of("reset bad\"name", "reset blk1"), admin.calls);
    }
}

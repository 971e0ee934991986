package io.rnbd.rtrs.command;

import static io.rnbd.rtrs.command.FakeClientAdmin.path;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.MiniJson;
import io.rnbd.command.support.Out;
import io.rnbd.command.support.SameAsTelemetry;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.telemetry.api.Telemetry;
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

    private final Telemetry telemetry = SameAsTelemetry.over(null, admin, null, null, null);

    private <T extends ConsoleCommand> T with(T c) {
        if (c instanceof SessionsCommand s) {
            s.admin = admin;
            s.telemetry = telemetry;
        } else if (c instanceof PathsCommand p) {
            p.admin = admin;
            p.telemetry = telemetry;
        } else if (c instanceof StatsCommand st) {
            st.admin = admin;
            st.telemetry = telemetry;
        }
        return c;
    }

    @Test
    void sessionsTableShowsStateConnectedPathsPolicyAndError() {
        String out = Out.run(with(new SessionsCommand()));
        List<List<String>> cells = Out.cells(out);
        assertEquals(3, cells.size(), out);
        assertEquals(List.of("SESSION", "STATE", "PATHS", "QUEUE DEPTH", "MP POLICY", "MAX RECONNECT", "LAST ERROR"),
                cells.get(0), out);
        assertEquals(List.of("bad\"name", "failed", "0/0", "128", "min-latency (using round-robin)", "3",
                "EKEYREJECTED (129)"), cells.get(1), out);
        assertEquals(List.of("blk1", "connected", "1/2", "512", "min-inflight", "-1", ""), cells.get(2), out);
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
        List<List<String>> cells = Out.cells(out);
        assertEquals(3, cells.size(), out);
        assertEquals(List.of("blk1", "10.0.0.1@10.0.0.2", "connected", "soft0", "10.0.0.1", "10.0.0.2", "0", "1", ""),
                cells.get(1), out);
        assertEquals(List.of("blk1", "10.0.1.1@10.0.1.2", "reconnecting"), cells.get(2).subList(0, 3), out);

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
        List<List<String>> cells = Out.cells(out);
        assertEquals(3, cells.size(), out);
        assertTrue(cells.get(0).contains("RECONNECTS OK/FAILED"), out);
        assertEquals(List.of("blk1", "10.0.0.1@10.0.0.2", "10", "40960", "2", "8192", "1", "3", "4/5", "0", "12.3",
                "67.9"), cells.get(1), out);

        StatsCommand j = with(new StatsCommand());
        j.json = true;
        List<Map<String, Object>> rows = MiniJson.array(Out.run(j));
        assertEquals(2, rows.size());
        @SuppressWarnings("unchecked")
        Map<String, Object> st = (Map<String, Object>) rows.get(0).get("stats");
        assertEquals(12_345L, st.get("hb_rtt_ns"));
        assertEquals(4L, st.get("reconnects_ok"));
        assertEquals(List.of("session", "name", "stats"), List.copyOf(rows.get(0).keySet()));
    }

    // ---- the console shows the telemetry tables, nothing mapped a second time -----------------

    @Test
    void sessionsAreTheTelemetryTableWithItsPathsNested() {
        SessionsCommand c = with(new SessionsCommand());
        c.json = true;
        String json = Out.run(c);
        SameAsTelemetry.assertJson(json, SameAsTelemetry.table(telemetry, "rtrs_client_session"), "paths", 0);
        SameAsTelemetry.assertNested(json, SameAsTelemetry.table(telemetry, "rtrs_client_session"), "paths",
                SameAsTelemetry.table(telemetry, "rtrs_client_path"));
        SameAsTelemetry.assertTable(Out.run(with(new SessionsCommand())),
                SameAsTelemetry.table(telemetry, "rtrs_client_session"));
    }

    @Test
    void pathsAreTheTelemetryTable() {
        PathsCommand c = with(new PathsCommand());
        c.json = true;
        SameAsTelemetry.assertJson(Out.run(c), SameAsTelemetry.table(telemetry, "rtrs_client_path"), null, 0);
        SameAsTelemetry.assertTable(Out.run(with(new PathsCommand())), SameAsTelemetry.table(telemetry, "rtrs_client_path"));
    }

    @Test
    void withoutTheTelemetryServiceTheListingsSaySoInOneLine() {
        for (ConsoleCommand c : List.of(with(new SessionsCommand()), with(new PathsCommand()), with(new StatsCommand()))) {
            if (c instanceof SessionsCommand s) {
                s.telemetry = null;
            } else if (c instanceof PathsCommand p) {
                p.telemetry = null;
            } else if (c instanceof StatsCommand st) {
                st.telemetry = null;
            }
            assertEquals("Error: the telemetry service is not running (bundle telemetry)\n", Out.run(c));
        }
    }

    @Test
    void statsResetOneOrEverySession() {
        StatsCommand c = with(new StatsCommand());
        c.reset = true;
        assertEquals("bad\"name: counters reset\nblk1: counters reset\n", Out.run(c));
        assertEquals(List.of("reset bad\"name", "reset blk1"), admin.calls);
    }
}

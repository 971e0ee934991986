package io.rnbd.rtrs.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.command.support.MiniJson;
import io.rnbd.command.support.Out;
import io.rnbd.command.support.SameAsTelemetry;
import io.rnbd.rtrs.api.RtrsIoStats;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.rtrs.api.RtrsServerPathInfo;
import io.rnbd.rtrs.api.RtrsServerSessionInfo;
import io.rnbd.telemetry.api.Telemetry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** rtrs:server-sessions and rtrs:server-session-close. */
class ServerSessionCommandsTest {
    private static final UUID U = UUID.fromString("00000000-0000-0000-0000-000000000001");
    private static final UUID P = UUID.fromString("00000000-0000-0000-0000-0000000000aa");

    private final List<RtrsServerSessionInfo> sessions = new ArrayList<>(List.of(
            new RtrsServerSessionInfo("blk1", "host\tA", U, 512, 131072,
                    List.of(new RtrsServerPathInfo(P, "soft0", "10.0.0.2:1234", "10.0.0.1:40000", 2, 7)),
                    new RtrsIoStats(5, 20480, 6, 24576, 7))));
    private final List<String> closed = new ArrayList<>();
    private final RtrsServerAdmin admin = new RtrsServerAdmin() {
        @Override
        public List<RtrsServerSessionInfo> sessions() {
            return List.copyOf(sessions);
        }

        @Override
        public boolean closeSession(String name) {
            closed.add(name);
            return sessions.removeIf(s -> s.name().equals(name));
        }
    };

    private final Telemetry telemetry = SameAsTelemetry.over(null, null, admin, null, null);

    private ServerSessionsCommand list() {
        ServerSessionsCommand c = new ServerSessionsCommand();
        c.admin = admin;
        c.telemetry = telemetry;
        return c;
    }

    @Test
    void tableOfSessionsAndOfPaths() {
        String table = Out.run(list());
        List<List<String>> cells = Out.cells(table);
        assertEquals(2, cells.size(), table);
        assertEquals(List.of("blk1", "host A", "1", "512", "128.0 KiB", "5", "6", "7"), cells.get(1), table);

        ServerSessionsCommand p = list();
        p.paths = true;
        String out = Out.run(p);
        assertEquals(List.of("blk1", P.toString(), "soft0", "10.0.0.2:1234", "10.0.0.1:40000", "2", "7"),
                Out.cells(out).get(1), out);
    }

    @Test
    void jsonCarriesPathsAndStats() {
        ServerSessionsCommand c = list();
        c.json = true;
        Map<String, Object> s = MiniJson.array(Out.run(c)).get(0);
        assertEquals("host\tA", s.get("host_id"));
        assertEquals(U.toString(), s.get("uuid"));
        assertEquals(131072L, s.get("chunk_size"));
        @SuppressWarnings("unchecked")
        Map<String, Object> path = ((List<Map<String, Object>>) s.get("paths")).get(0);
        assertEquals(2L, path.get("connections"));
        @SuppressWarnings("unchecked")
        Map<String, Object> st = (Map<String, Object>) s.get("stats");
        assertEquals(24576L, st.get("write_bytes"));
    }

    @Test
    void sessionsAndTheirPathsAreTheTelemetryTables() {
        ServerSessionsCommand c = list();
        c.json = true;
        String json = Out.run(c);
        SameAsTelemetry.assertJson(json, SameAsTelemetry.table(telemetry, "rtrs_server_session"), "paths", 0);
        SameAsTelemetry.assertNested(json, SameAsTelemetry.table(telemetry, "rtrs_server_session"), "paths",
                SameAsTelemetry.table(telemetry, "rtrs_server_path"));
        ServerSessionsCommand p = list();
        p.paths = true;
        SameAsTelemetry.assertTable(Out.run(p), SameAsTelemetry.table(telemetry, "rtrs_server_path"));
    }

    @Test
    void closeKnownAndUnknownSessions() {
        ServerSessionCloseCommand c = new ServerSessionCloseCommand();
        c.admin = admin;
        c.name = "nope";
        assertEquals("Error: no server session 'nope' (sessions: blk1)\n", Out.run(c));
        c.name = "blk1";
        assertEquals("server session blk1 closed\n", Out.run(c));
        assertEquals("Error: no server session 'blk1' (there is no session)\n", Out.run(c));
        assertEquals(List.of("nope", "blk1", "blk1"), closed);
    }

    @Test
    void withoutTheServerTheCommandsSaySo() {
        assertEquals("Error: the RTRS server is not running (bundle rtrs-server)\n", Out.run(new ServerSessionsCommand()));
        ServerSessionCloseCommand c = new ServerSessionCloseCommand();
        c.name = "x";
        assertEquals("Error: the RTRS server is not running (bundle rtrs-server)\n", Out.run(c));
    }
}

package io.rnbd.rtrs.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.command.support.MiniJson;
import io.rnbd.command.support.Out;
import io.rnbd.rtrs.api.RtrsIoStats;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.rtrs.api.RtrsServerPathInfo;
import io.rnbd.rtrs.api.RtrsServerSessionInfo;
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

    private ServerSessionsCommand list() {
        ServerSessionsCommand c = new ServerSessionsCommand();
        c.admin = admin;
        return c;
    }

    @Test
    void tableOfSessionsAndOfPaths() {
        List<String> lines = Out.run(list()).lines().toList();
        assertEquals(2, lines.size(), lines.toString());
        assertTrue(lines.get(1).matches("blk1\\s+host A\\s+1\\s+512\\s+128.0 KiB\\s+5\\s+6\\s+7"), lines.get(1));

        ServerSessionsCommand p = list();
        p.paths = true;
        String out = Out.run(p);
        assertTrue(out.lines().skip(1).findFirst().orElseThrow()
                .matches("blk1\\s+" + P + "\\s+soft0\\s+10.0.0.2:1234\\s+10.0.0.1:40000\\s+2\\s+7"), out);
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

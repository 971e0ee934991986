package io.rnbd.telemetry.dashboard.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.command.support.MiniJson;
import io.rnbd.telemetry.internal.TelemetryReader;
import io.rnbd.telemetry.testing.StubAdmins;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class DashboardServletTest {
    private final TelemetryReader telemetry = new TelemetryReader(new StubAdmins().applianceProfile().sources());
    private final Login login = (user, password) -> user.equals("karaf") && new String(password).equals("karaf")
            ? Optional.of(user) : Optional.empty();
    private final DashboardServlet servlet = new DashboardServlet(telemetry::tables, login, 1800, () -> 1234L);
    private final FakeHttp http = new FakeHttp();

    private String loggedIn() throws Exception {
        FakeHttp.Response r = http.call(servlet, "POST", "/login", null, Map.of("username", "karaf", "password", "karaf"));
        assertEquals("/rnbd/", r.redirect);
        return r.sessionId;
    }

    @Test
    void withoutALoginOnlyTheLoginPageItsStyleAndScriptAreServed() throws Exception {
        assertEquals("/rnbd/login.html", http.call(servlet, "GET", "/", null, Map.of()).redirect);
        assertEquals("/rnbd/login.html", http.call(servlet, "GET", "/index.html", null, Map.of()).redirect);
        assertEquals("/rnbd/", http.call(servlet, "GET", null, null, Map.of()).redirect);
        FakeHttp.Response api = http.call(servlet, "GET", "/api/state", null, Map.of());
        assertEquals(401, api.status);
        assertFalse(api.text().contains("appliance"), "no data before login");
        for (String f : new String[] {"/login.html", "/style.css", "/app.js"}) {
            FakeHttp.Response r = http.call(servlet, "GET", f, null, Map.of());
            assertEquals(200, r.status, f);
            assertTrue(r.body.size() > 100, f);
        }
        assertEquals(404, http.call(servlet, "GET", "/../META-INF/MANIFEST.MF", null, Map.of()).status);
        assertEquals(404, http.call(servlet, "GET", "/api/other", null, Map.of()).status);
        assertTrue(http.call(servlet, "GET", "/login.html", null, Map.of()).headers.get("Content-Security-Policy")
                .contains("default-src 'self'"));
    }

    @Test
    void aWrongPasswordGetsTheLoginPageBackAndNoSession() throws Exception {
        FakeHttp.Response r = http.call(servlet, "POST", "/login", null, Map.of("username", "karaf", "password", "nope"));
        assertEquals("/rnbd/login.html?failed", r.redirect);
        assertEquals(Map.of(), http.sessions);
        assertEquals(401, http.call(servlet, "GET", "/api/state", r.sessionId, Map.of()).status);
    }

    @Test
    void afterLoginThePageAndTheStateAreServedUntilLogout() throws Exception {
        FakeHttp.Response before = http.call(servlet, "GET", "/", null, Map.of());
        String session = loggedIn();
        assertEquals(1800, http.sessions.get(session).get("timeout"));
        FakeHttp.Response page = http.call(servlet, "GET", "/", session, Map.of());
        assertEquals(200, page.status);
        assertTrue(page.text().contains("id=\"paths\""));

        FakeHttp.Response api = http.call(servlet, "GET", "/api/state", session, Map.of());
        assertEquals(200, api.status);
        assertEquals("no-store", api.headers.get("Cache-Control"));
        Map<String, Object> state = MiniJson.object(api.text());
        assertEquals("karaf", state.get("user"));
        assertEquals(1234L, ((Number) state.get("time_ms")).longValue());
        @SuppressWarnings("unchecked")
        Map<String, Map<String, Object>> tables = (Map<String, Map<String, Object>>) state.get("tables");
        assertEquals(telemetry.schemas().size(), tables.size());
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> paths = (List<Map<String, Object>>) tables.get("rtrs_client_path").get("rows");
        assertEquals("127.0.0.1@127.0.0.1", paths.get(0).get("path"));
        assertEquals("CONNECTED", paths.get(0).get("state"));
        @SuppressWarnings("unchecked")
        Map<String, Object> histogram = (Map<String, Object>) paths.get(0).get("io_latency");
        assertEquals(1042L, ((Number) histogram.get("count")).longValue());

        assertEquals("/rnbd/login.html", http.call(servlet, "POST", "/logout", session, Map.of()).redirect);
        assertEquals(401, http.call(servlet, "GET", "/api/state", session, Map.of()).status);
        assertNotEquals(before.sessionId, session);
    }

    @Test
    void loggingInAgainStartsANewSession() throws Exception {
        FakeHttp.Response planted = http.call(servlet, "POST", "/login", null,
                Map.of("username", "karaf", "password", "karaf"));
        FakeHttp.Response again = http.call(servlet, "POST", "/login", planted.sessionId,
                Map.of("username", "karaf", "password", "karaf"));
        assertNotEquals(planted.sessionId, again.sessionId);
        assertFalse(http.sessions.containsKey(planted.sessionId));
    }
}

package io.rnbd.telemetry.dashboard.internal;

import io.rnbd.telemetry.api.Table;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import javax.servlet.http.HttpSession;

/**
 * The dashboard under one servlet path (/rnbd): the page and its script and style (static
 * files of this bundle), a login form checked by {@link Login}, and {@code api/state}, the
 * JSON the page polls every second. Only the login page, the style and the script (no data
 * in either) are served without a logged-in session; everything else redirects to the login
 * page or answers 401.
 */
public final class DashboardServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    /** The session attribute holding the logged-in user's name. */
    static final String USER = "io.rnbd.dashboard.user";
    private static final Map<String, String> PUBLIC = Map.of(
            "/login.html", "text/html; charset=utf-8",
            "/style.css", "text/css; charset=utf-8",
            "/app.js", "text/javascript; charset=utf-8");
    private static final String CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

    private final transient Supplier<List<Table>> tables;
    private final transient Login login;
    private final int sessionTimeoutSeconds;
    private final transient LongSupplier clock;

    public DashboardServlet(Supplier<List<Table>> tables, Login login, int sessionTimeoutSeconds, LongSupplier clock) {
        this.tables = tables;
        this.login = login;
        this.sessionTimeoutSeconds = sessionTimeoutSeconds;
        this.clock = clock;
    }

    private static String base(HttpServletRequest req) {
        return req.getContextPath() + req.getServletPath();
    }

    private static String path(HttpServletRequest req) {
        String p = req.getPathInfo();
        return p == null ? "" : p;
    }

    private static Optional<String> user(HttpServletRequest req) {
        HttpSession s = req.getSession(false);
        Object u = s == null ? null : s.getAttribute(USER);
        return u == null ? Optional.empty() : Optional.of(u.toString());
    }

    private static void headers(HttpServletResponse resp) {
        resp.setHeader("Content-Security-Policy", CSP);
        resp.setHeader("X-Content-Type-Options", "nosniff");
        resp.setHeader("X-Frame-Options", "DENY");
        resp.setHeader("Referrer-Policy", "no-referrer");
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        headers(resp);
        String path = path(req);
        Optional<String> user = user(req);
        if (path.isEmpty()) {
            resp.sendRedirect(base(req) + "/");
        } else if (PUBLIC.containsKey(path)) {
            file(resp, path, PUBLIC.get(path));
        } else if (path.equals("/") || path.equals("/index.html")) {
            if (user.isEmpty()) {
                resp.sendRedirect(base(req) + "/login.html");
            } else {
                file(resp, "/index.html", "text/html; charset=utf-8");
            }
        } else if (path.equals("/api/state")) {
            resp.setHeader("Cache-Control", "no-store");
            if (user.isEmpty()) {
                json(resp, HttpServletResponse.SC_UNAUTHORIZED, StateJson.error("login required"));
            } else {
                json(resp, HttpServletResponse.SC_OK, StateJson.render(tables.get(), user.get(), clock.getAsLong()));
            }
        } else {
            resp.sendError(HttpServletResponse.SC_NOT_FOUND);
        }
    }

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        headers(resp);
        switch (path(req)) {
            case "/login" -> login(req, resp);
            case "/logout" -> {
                HttpSession s = req.getSession(false);
                if (s != null) {
                    s.invalidate();
                }
                resp.sendRedirect(base(req) + "/login.html");
            }
            default -> resp.sendError(HttpServletResponse.SC_NOT_FOUND);
        }
    }

    private void login(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String name = req.getParameter("username");
        String password = req.getParameter("password");
        Optional<String> user = login.authenticate(name, password == null ? null : password.toCharArray());
        if (user.isEmpty()) {
            try {
                Thread.sleep(300); // a guess costs time
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            resp.sendRedirect(base(req) + "/login.html?failed");
            return;
        }
        HttpSession old = req.getSession(false);
        if (old != null) {
            old.invalidate(); // a new session id after login: none planted before it survives
        }
        HttpSession session = req.getSession(true);
        session.setAttribute(USER, user.get());
        session.setMaxInactiveInterval(sessionTimeoutSeconds);
        resp.sendRedirect(base(req) + "/");
    }

    private static void json(HttpServletResponse resp, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        resp.setStatus(status);
        resp.setContentType("application/json; charset=utf-8");
        resp.setContentLength(bytes.length);
        resp.getOutputStream().write(bytes);
    }

    private static void file(HttpServletResponse resp, String name, String type) throws IOException {
        try (InputStream in = DashboardServlet.class.getResourceAsStream("/dashboard" + name)) {
            if (in == null) {
                resp.sendError(HttpServletResponse.SC_NOT_FOUND);
                return;
            }
            byte[] bytes = in.readAllBytes();
            resp.setContentType(type);
            resp.setHeader("Cache-Control", "no-cache");
            resp.setContentLength(bytes.length);
            resp.getOutputStream().write(bytes);
        }
    }
}

package io.rnbd.telemetry.dashboard.internal;

import java.io.ByteArrayOutputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import javax.servlet.ServletOutputStream;
import javax.servlet.WriteListener;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import javax.servlet.http.HttpSession;

/** Just enough of a servlet container for the dashboard servlet: requests, responses, one session store. */
final class FakeHttp {
    /** The sessions by id, as the container would keep them. */
    final Map<String, Map<String, Object>> sessions = new HashMap<>();
    private int ids;

    final class Response {
        int status = 200;
        String redirect;
        String contentType;
        final Map<String, String> headers = new TreeMap<>();
        final ByteArrayOutputStream body = new ByteArrayOutputStream();
        String sessionId;

        String text() {
            return body.toString(StandardCharsets.UTF_8);
        }
    }

    /** Runs {@code GET|POST /rnbd<pathInfo>} with the given session id (or null) and form parameters. */
    Response call(DashboardServlet servlet, String method, String pathInfo, String sessionId,
                  Map<String, String> params) throws Exception {
        Response r = new Response();
        r.sessionId = sessionId;
        HttpServletRequest req = (HttpServletRequest) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {HttpServletRequest.class}, (p, m, a) -> switch (m.getName()) {
                    case "getMethod" -> method;
                    case "getContextPath" -> "";
                    case "getServletPath" -> "/rnbd";
                    case "getPathInfo" -> pathInfo;
                    case "getParameter" -> params.get((String) a[0]);
                    case "getSession" -> session(r, a == null || (Boolean) a[0]);
                    case "getProtocol" -> "HTTP/1.1";
                    case "getHeader", "getDateHeader" -> m.getReturnType() == long.class ? -1L : null;
                    default -> throw new UnsupportedOperationException("request." + m.getName());
                });
        ServletOutputStream out = new ServletOutputStream() {
            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setWriteListener(WriteListener listener) {
            }

            @Override
            public void write(int b) {
                r.body.write(b);
            }
        };
        HttpServletResponse resp = (HttpServletResponse) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {HttpServletResponse.class}, (p, m, a) -> {
                    switch (m.getName()) {
                        case "setStatus" -> r.status = (Integer) a[0];
                        case "sendError" -> r.status = (Integer) a[0];
                        case "sendRedirect" -> {
                            r.status = 302;
                            r.redirect = (String) a[0];
                        }
                        case "setContentType" -> r.contentType = (String) a[0];
                        case "setHeader" -> r.headers.put((String) a[0], (String) a[1]);
                        case "setContentLength" -> { }
                        case "getOutputStream" -> {
                            return out;
                        }
                        default -> throw new UnsupportedOperationException("response." + m.getName());
                    }
                    return null;
                });
        if (method.equals("GET")) {
            servlet.doGet(req, resp);
        } else {
            servlet.doPost(req, resp);
        }
        return r;
    }

    private HttpSession session(Response r, boolean create) {
        if (r.sessionId == null || !sessions.containsKey(r.sessionId)) {
            if (!create) {
                return null;
            }
            r.sessionId = "s" + ++ids;
            sessions.put(r.sessionId, new HashMap<>());
        }
        String id = r.sessionId;
        Map<String, Object> attributes = sessions.get(id);
        return (HttpSession) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {HttpSession.class},
                (p, m, a) -> switch (m.getName()) {
                    case "getAttribute" -> attributes.get((String) a[0]);
                    case "setAttribute" -> {
                        attributes.put((String) a[0], a[1]);
                        yield null;
                    }
                    case "invalidate" -> {
                        sessions.remove(id);
                        yield null;
                    }
                    case "setMaxInactiveInterval" -> {
                        attributes.put("timeout", a[0]);
                        yield null;
                    }
                    case "getId" -> id;
                    default -> throw new UnsupportedOperationException("session." + m.getName());
                });
    }
}

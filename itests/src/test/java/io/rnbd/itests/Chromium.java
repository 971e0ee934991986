package io.rnbd.itests;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * Debian's headless Chromium, driven over the DevTools protocol (a WebSocket, JDK only): no
 * WebDriver, no browser download. Started with the flags this machine needs (no sandbox as
 * root, no background networking, a fresh profile), on a DevTools port it picks itself.
 */
final class Chromium implements AutoCloseable {
    static final Path BINARY = Path.of("/usr/bin/chromium");

    private final Process process;
    private final Path profile;
    private final WebSocket socket;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<Map<String, Object>>> pending = new ConcurrentHashMap<>();

    /** Why no browser can run here, or null when one can. */
    static String unavailable() {
        return Files.isExecutable(BINARY) ? null : BINARY + " is missing (Debian package chromium)";
    }

    Chromium(int width, int height, Path log) throws Exception {
        profile = Files.createTempDirectory("rnbd-chromium");
        process = new ProcessBuilder(BINARY.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-extensions", "--user-data-dir=" + profile,
                "--remote-debugging-port=0", "--window-size=" + width + "," + height, "about:blank")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        Path active = profile.resolve("DevToolsActivePort");
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!Files.exists(active) || Files.readAllLines(active).size() < 2) {
            if (!process.isAlive() || System.nanoTime() > end) {
                close();
                throw new IllegalStateException("Chromium did not start (see " + log + ")");
            }
            Thread.sleep(50);
        }
        int port = Integer.parseInt(Files.readAllLines(active).get(0).strip());
        HttpClient http = HttpClient.newHttpClient();
        String targets = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/json/list")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        String page = null;
        for (Object t : JsonText.array(JsonText.parse(targets))) {
            Map<String, Object> target = JsonText.object(t);
            if ("page".equals(target.get("type"))) {
                page = (String) target.get("webSocketDebuggerUrl");
            }
        }
        if (page == null) {
            close();
            throw new IllegalStateException("Chromium shows no page: " + targets);
        }
        socket = http.newWebSocketBuilder().buildAsync(URI.create(page), new Listener()).get(30, TimeUnit.SECONDS);
    }

    private final class Listener implements WebSocket.Listener {
        private final StringBuilder partial = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                Map<String, Object> message = JsonText.object(JsonText.parse(partial.toString()));
                partial.setLength(0);
                Object id = message.get("id");
                if (id != null) {
                    CompletableFuture<Map<String, Object>> f = pending.remove(((Number) id).intValue());
                    if (f != null) {
                        f.complete(message);
                    }
                }
            }
            ws.request(1);
            return null;
        }
    }

    /** One DevTools command; its result object, or IllegalStateException with the browser's error. */
    Map<String, Object> send(String method, String paramsJson) throws Exception {
        int id = ids.incrementAndGet();
        CompletableFuture<Map<String, Object>> answer = new CompletableFuture<>();
        pending.put(id, answer);
        socket.sendText("{\"id\":" + id + ",\"method\":\"" + method + "\",\"params\":" + paramsJson + "}", true)
                .get(10, TimeUnit.SECONDS);
        Map<String, Object> message = answer.get(30, TimeUnit.SECONDS);
        if (message.containsKey("error")) {
            throw new IllegalStateException(method + ": " + message.get("error"));
        }
        return JsonText.object(message.get("result"));
    }

    void navigate(String url) throws Exception {
        send("Page.navigate", "{\"url\":" + JsonText.quote(url) + "}");
    }

    /** The value of a JavaScript expression in the page (awaited if it is a promise). */
    Object eval(String expression) throws Exception {
        Map<String, Object> r = send("Runtime.evaluate", "{\"expression\":" + JsonText.quote(expression)
                + ",\"returnByValue\":true,\"awaitPromise\":true}");
        if (r.containsKey("exceptionDetails")) {
            throw new IllegalStateException("the page threw: " + r.get("exceptionDetails"));
        }
        return JsonText.object(r.get("result")).get("value");
    }

    String text(String expression) throws Exception {
        Object v = eval(expression);
        return v == null ? null : v.toString();
    }

    /** Waits until the expression is true in the page; fails with {@code state} evaluated. */
    void await(String what, String expression, long timeoutMs, String stateExpression) throws Exception {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!Boolean.TRUE.equals(safeEval(expression))) {
            if (System.nanoTime() > end) {
                throw new AssertionError(what + " not within " + timeoutMs + " ms; the page shows: "
                        + safeEval(stateExpression));
            }
            Thread.sleep(100); // polling: the page changes on its own one-second clock
        }
    }

    private Object safeEval(String expression) {
        try {
            return eval(expression);
        } catch (Exception e) {
            return e.toString(); // between two pages while one navigates: try again
        }
    }

    /** A PNG of the whole page. */
    void screenshot(Path png) throws Exception {
        Map<String, Object> r = send("Page.captureScreenshot", "{\"format\":\"png\",\"captureBeyondViewport\":true}");
        Files.createDirectories(png.getParent());
        Files.write(png, Base64.getDecoder().decode((String) r.get("data")));
    }

    @Override
    public void close() throws IOException {
        if (socket != null) {
            socket.abort();
        }
        // its renderer and GPU helpers are children: collected first, they are reparented once it exits
        List<ProcessHandle> helpers = process.descendants().toList();
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        helpers.forEach(ProcessHandle::destroyForcibly);
        if (Files.exists(profile)) {
            try (Stream<Path> files = Files.walk(profile)) {
                List<Path> all = new ArrayList<>(files.sorted(Comparator.reverseOrder()).toList());
                for (Path p : all) {
                    p.toFile().delete();
                }
            }
        }
    }
}

package io.rnbd.itests;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A scrape read by the Prometheus project's Python parser
 * ({@code prometheus_client.parser.text_string_to_metric_families}, Debian's
 * python3-prometheus-client): what a real scraper makes of /metrics.
 */
final class PromParser {
    static final Path PYTHON = Path.of("/usr/bin/python3");
    private static final String SCRIPT = String.join("\n",
            "import sys, json",
            "from prometheus_client.parser import text_string_to_metric_families",
            "out = [{'name': f.name, 'type': f.type, 'samples': [{'name': s.name, 'labels': s.labels,",
            "        'value': s.value} for s in f.samples]} for f in text_string_to_metric_families(sys.stdin.read())]",
            "json.dump(out, sys.stdout)");

    record Sample(String name, Map<String, Object> labels, double value) {
    }

    record Family(String name, String type, List<Sample> samples) {
    }

    /** Why the parser cannot run here, or null when it can. */
    static String unavailable() throws InterruptedException {
        if (!Files.isExecutable(PYTHON)) {
            return PYTHON + " is missing (Debian package python3)";
        }
        try {
            Process p = new ProcessBuilder(PYTHON.toString(), "-c", "import prometheus_client.parser")
                    .redirectErrorStream(true).start();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0 ? null
                    : "prometheus_client is missing (Debian package python3-prometheus-client)";
        } catch (IOException e) {
            return "cannot run " + PYTHON + ": " + e.getMessage();
        }
    }

    /** Families by name (a counter's without _total, as the parser names them). */
    static Map<String, Family> parse(String exposition) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(PYTHON.toString(), "-c", SCRIPT).start();
        try (OutputStream in = p.getOutputStream()) {
            in.write(exposition.getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new AssertionError("the Prometheus parser rejected the scrape: " + err);
        }
        Map<String, Family> families = new LinkedHashMap<>();
        for (Object f : JsonText.array(JsonText.parse(out))) {
            Map<String, Object> family = JsonText.object(f);
            List<Sample> samples = JsonText.array(family.get("samples")).stream().map(JsonText::object)
                    .map(s -> new Sample((String) s.get("name"), JsonText.object(s.get("labels")),
                            ((Number) s.get("value")).doubleValue())).toList();
            families.put((String) family.get("name"), new Family((String) family.get("name"),
                    (String) family.get("type"), samples));
        }
        return families;
    }
}

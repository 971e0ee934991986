package io.rnbd.telemetry.prometheus.internal;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The exposition parsed by the Prometheus project's own Python parser
 * ({@code prometheus_client.parser.text_string_to_metric_families}, Debian's
 * python3-prometheus-client), so what is checked is what a real scraper reads.
 */
final class PythonPromParser {
    static final Path PYTHON = Path.of("/usr/bin/python3");
    private static final String SCRIPT = String.join("\n",
            "import sys",
            "from prometheus_client.parser import text_string_to_metric_families",
            "for f in text_string_to_metric_families(sys.stdin.read()):",
            "    print('F\\t%s\\t%s' % (f.name, f.type))",
            "    for s in f.samples:",
            "        labels = ','.join('%s=%s' % (k, v.encode().hex()) for k, v in sorted(s.labels.items()))",
            "        print('S\\t%s\\t%s\\t%s\\t%r' % (f.name, s.name, labels, float(s.value)))");

    record Sample(String name, Map<String, String> labels, double value) {
    }

    record Family(String name, String type, List<Sample> samples) {
    }

    /** Why the parser cannot run here, or null when it can. */
    static String unavailable() {
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
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    /**
     * Families by name; throws AssertionError with the parser's message when it rejects the
     * text. Label values travel hex-encoded, so no character of theirs can break a line.
     */
    static Map<String, Family> parse(String exposition) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(PYTHON.toString(), "-c", SCRIPT).redirectErrorStream(false).start();
        try (OutputStream in = p.getOutputStream()) {
            in.write(exposition.getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new AssertionError("the Prometheus parser rejected the exposition: " + err);
        }
        Map<String, Family> families = new LinkedHashMap<>();
        for (String line : out.split("\n")) {
            String[] f = line.split("\t", -1);
            if (f[0].equals("F")) {
                families.put(f[1], new Family(f[1], f[2], new ArrayList<>()));
            } else if (f[0].equals("S")) {
                Map<String, String> labels = new TreeMap<>();
                if (!f[3].isEmpty()) {
                    for (String kv : f[3].split(",")) {
                        String[] pair = kv.split("=", 2);
                        labels.put(pair[0], new String(java.util.HexFormat.of().parseHex(pair[1]),
                                StandardCharsets.UTF_8));
                    }
                }
                families.get(f[1]).samples().add(new Sample(f[2], labels, Double.parseDouble(f[4])));
            }
        }
        return families;
    }
}

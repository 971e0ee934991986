package io.rnbd.telemetry.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.telemetry.api.Column;
import io.rnbd.telemetry.api.TableSchema;
import io.rnbd.telemetry.testing.StubAdmins;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The "Every field, by table" part of docs/observability.md is what the schemas say: when a
 * column is added or renamed this fails, and target/observability-tables.md holds the text to
 * put in its place.
 */
class ObservabilityDocsTest {
    private static final Path DOC = Path.of("../../docs/observability.md");

    @Test
    void theDocsTablesAreTheSchemas() throws Exception {
        String expected = tables();
        String doc = Files.readString(DOC);
        if (!doc.contains(expected)) {
            Path fresh = Path.of("target/observability-tables.md");
            Files.writeString(fresh, expected);
            assertTrue(false, DOC + " does not list the tables as they are: replace its \"### rdma_device\" ... "
                    + "part with " + fresh.toAbsolutePath());
        }
    }

    static String tables() {
        StringBuilder md = new StringBuilder();
        for (TableSchema s : new TelemetryReader(new StubAdmins().sources()).schemas()) {
            StringBuilder name = new StringBuilder("io.rnbd:type=" + s.jmxType());
            s.ids().forEach(c -> name.append(',').append(c.key()).append("=…"));
            md.append("### ").append(s.name()).append("\n\n").append(s.help()).append(". MBean `").append(name)
                    .append('`');
            if (!s.ids().isEmpty()) {
                md.append("; every metric is labelled ")
                        .append(String.join(", ", s.ids().stream().map(c -> "`" + c.key() + "`").toList()));
            }
            md.append(".\n\n| console `--json` | MBean attribute | Prometheus | what |\n|---|---|---|---|\n");
            for (Column c : s.columns()) {
                md.append("| ").append(c.console().isEmpty() ? "–" : "`" + c.console() + "`").append(" | `")
                        .append(c.attribute()).append('`').append(switch (c.type()) {
                            case LIST -> " (String[])";
                            case HISTOGRAM -> " (CompositeData)";
                            case COUNTERS -> " (TabularData)";
                            case NANOS -> " (ns)";
                            case FLAG -> " (boolean)";
                            default -> "";
                        }).append(" | ").append(prometheus(s, c)).append(" | ").append(c.help()).append(" |\n");
            }
            md.append('\n');
        }
        return md.toString().stripTrailing();
    }

    private static String prometheus(TableSchema s, Column c) {
        String family = "`" + s.family(c) + "`";
        return switch (c.type()) {
            case ID -> "label `" + c.key() + "`";
            case TEXT, LIST -> "label `" + c.key() + "` of " + family;
            case STATE -> "`" + s.family(c) + "{state=…}` (one of " + String.join(", ", c.states()) + ")";
            case HISTOGRAM -> family + " histogram";
            case COUNTERS -> "`" + s.family(c) + "{" + c.metric() + "=…}`";
            case COUNTER -> family + " counter";
            default -> family;
        };
    }
}

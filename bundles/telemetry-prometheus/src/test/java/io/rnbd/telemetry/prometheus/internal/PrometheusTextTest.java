package io.rnbd.telemetry.prometheus.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.LatencyHistogram;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.telemetry.api.Column;
import io.rnbd.telemetry.api.ColumnType;
import io.rnbd.telemetry.api.Table;
import io.rnbd.telemetry.api.TableSchema;
import io.rnbd.telemetry.internal.TelemetryReader;
import io.rnbd.telemetry.prometheus.internal.PythonPromParser.Family;
import io.rnbd.telemetry.prometheus.internal.PythonPromParser.Sample;
import io.rnbd.telemetry.testing.StubAdmins;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class PrometheusTextTest {
    private final StubAdmins admins = new StubAdmins().applianceProfile();
    private final TelemetryReader telemetry = new TelemetryReader(admins.sources());

    @BeforeAll
    static void parserPresent() {
        String why = PythonPromParser.unavailable();
        Assumptions.assumeTrue(why == null, () -> "skipped: " + why);
    }

    /** Python's parser strips _total from a counter's family name. */
    private static String parsedName(TableSchema schema, Column c) {
        String family = schema.family(c);
        return c.type() == ColumnType.COUNTER || c.type() == ColumnType.COUNTERS
                ? family.substring(0, family.length() - "_total".length()) : family;
    }

    private static Sample sample(Family f, String name, Map<String, String> labels) {
        return f.samples().stream().filter(s -> s.name().equals(name) && s.labels().equals(labels)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + name + labels + " in " + f.samples()));
    }

    @Test
    void everyColumnOfEveryTableIsAFamilyOfTheRightTypeWithASamplePerRow() throws Exception {
        Map<String, Family> parsed = PythonPromParser.parse(PrometheusText.render(telemetry.tables()));
        List<String> problems = new ArrayList<>();
        for (Table t : telemetry.tables()) {
            for (Column c : t.schema().columns()) {
                if (c.type() == ColumnType.ID) {
                    continue;
                }
                Family f = parsed.get(parsedName(t.schema(), c));
                String expectedType = switch (c.type()) {
                    case COUNTER, COUNTERS -> "counter";
                    case HISTOGRAM -> "histogram";
                    default -> "gauge";
                };
                if (f == null) {
                    problems.add(t.schema().name() + "." + c.key() + ": no family " + t.schema().family(c));
                } else if (!f.type().equals(expectedType)) {
                    problems.add(f.name() + " is a " + f.type() + ", not a " + expectedType);
                } else if (f.samples().isEmpty() && !t.rows().isEmpty()) {
                    problems.add(f.name() + " has no samples");
                }
            }
        }
        for (Family f : parsed.values()) {
            if (f.type().equals("unknown") || f.type().equals("untyped")) {
                problems.add(f.name() + ": samples the parser could not tie to their TYPE");
            }
        }
        assertEquals(List.of(), problems);
    }

    @Test
    void valuesLabelsStatesAndHistogramsAsAScraperReadsThem() throws Exception {
        admins.pathState("appliance", "127.0.0.2@127.0.0.2", PathState.RECONNECTING);
        Map<String, Family> m = PythonPromParser.parse(PrometheusText.render(telemetry.tables()));
        Map<String, String> p1 = Map.of("session", "appliance", "path", "127.0.0.1@127.0.0.1");
        Map<String, String> p2 = Map.of("session", "appliance", "path", "127.0.0.2@127.0.0.2");

        assertEquals(1042, sample(m.get("rnbd_rtrs_client_path_reads"), "rnbd_rtrs_client_path_reads_total", p1).value());
        assertEquals(1042 * 4096.0, sample(m.get("rnbd_rtrs_client_path_read_bytes"),
                "rnbd_rtrs_client_path_read_bytes_total", p1).value());
        assertEquals(0.00003, sample(m.get("rnbd_rtrs_client_path_heartbeat_rtt_seconds"),
                "rnbd_rtrs_client_path_heartbeat_rtt_seconds", p1).value(), 1e-12);

        Family state = m.get("rnbd_rtrs_client_path_state");
        assertEquals(1, sample(state, state.name(), with(p2, "state", "RECONNECTING")).value());
        assertEquals(0, sample(state, state.name(), with(p2, "state", "CONNECTED")).value());
        assertEquals(1, sample(state, state.name(), with(p1, "state", "CONNECTED")).value());
        assertEquals(PathState.values().length * 2, state.samples().size());

        Family info = m.get("rnbd_rtrs_client_path_info");
        Sample i1 = sample(info, "rnbd_rtrs_client_path_info", Map.of("session", "appliance",
                "path", "127.0.0.1@127.0.0.1", "src_addr", "127.0.0.1", "dst_addr", "127.0.0.1:1234", "hca_name", "soft0"));
        assertEquals(1, i1.value());

        Family latency = m.get("rnbd_rtrs_client_path_io_latency_seconds");
        long[] bounds = LatencyHistogram.boundsNanos();
        double previous = 0;
        for (int i = 0; i <= bounds.length; i++) {
            String le = i < bounds.length ? PrometheusText.seconds(bounds[i]) : "+Inf";
            double v = sample(latency, "rnbd_rtrs_client_path_io_latency_seconds_bucket", with(p1, "le", le)).value();
            assertTrue(v >= previous, "buckets are cumulative");
            previous = v;
        }
        assertEquals(1042, previous, "+Inf holds every IO");
        assertEquals(1042, sample(latency, "rnbd_rtrs_client_path_io_latency_seconds_count", p1).value());
        assertEquals(1042 * 80e-6, sample(latency, "rnbd_rtrs_client_path_io_latency_seconds_sum", p1).value(), 1e-9);
        // 80 us falls in the (50 us, 100 us] bucket
        assertEquals(0, sample(latency, "rnbd_rtrs_client_path_io_latency_seconds_bucket", with(p1, "le", "0.00005")).value());
        assertEquals(1042, sample(latency, "rnbd_rtrs_client_path_io_latency_seconds_bucket", with(p1, "le", "0.0001")).value());

        assertEquals(12, sample(m.get("rnbd_rdma_device_counter"), "rnbd_rdma_device_counter_total",
                Map.of("device", "soft0", "counter", "polls")).value());
        assertEquals(1L << 30, (long) sample(m.get("rnbd_export_size_bytes"), "rnbd_export_size_bytes",
                Map.of("export", "mem0")).value());
        assertEquals(0, sample(m.get("rnbd_export_read_only"), "rnbd_export_read_only", Map.of("export", "mem0")).value());
        assertEquals(1, sample(m.get("rnbd_export_opener_info"), "rnbd_export_opener_info",
                Map.of("export", "mem0", "session", "appliance", "access_mode", "RW")).value());
        assertEquals(1919, sample(m.get("rnbd_device_io_latency_seconds"), "rnbd_device_io_latency_seconds_count",
                Map.of("device", "rnbd0")).value());
        assertEquals(1, sample(m.get("rnbd_nbd_gateway_connections_open"), "rnbd_nbd_gateway_connections_open",
                Map.of()).value());
    }

    private static Map<String, String> with(Map<String, String> labels, String key, String value) {
        Map<String, String> m = new java.util.TreeMap<>(labels);
        m.put(key, value);
        return m;
    }

    @Test
    void labelValuesWithQuotesBackslashesAndNewlinesSurviveTheParser() throws Exception {
        String odd = "why \"not\" \\ here\nsecond line";
        admins.exports.set(0, new io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo("mem0", "memory", 0,
                io.rnbd.rnbd.api.RnbdServerAdmin.ExportState.OFFLINE, true, List.of(),
                io.rnbd.rnbd.api.BlockIoStats.ZERO, odd));
        Family info = PythonPromParser.parse(PrometheusText.render(telemetry.tables())).get("rnbd_export_info");
        assertNotNull(info);
        assertEquals(odd, info.samples().get(0).labels().get("last_error"));
    }

    @Test
    void withNothingRunningEveryFamilyIsStillDescribed() throws Exception {
        TelemetryReader empty = new TelemetryReader(new StubAdmins().sources());
        Map<String, Family> m = PythonPromParser.parse(PrometheusText.render(empty.tables()));
        assertTrue(m.containsKey("rnbd_rtrs_client_path_io_latency_seconds"));
        assertTrue(m.values().stream().allMatch(f -> f.samples().isEmpty()), "no samples without rows");
    }
}

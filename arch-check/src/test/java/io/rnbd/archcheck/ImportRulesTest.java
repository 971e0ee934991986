package io.rnbd.archcheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The import rules of {@link ArchitectureTest} on graphs made up here: they find what they look for. */
class ImportRulesTest {
    @Test
    void aCycleIsFound() {
        Map<String, Set<String>> graph = Map.of(
                "rnbd-client", Set.of("rnbd-api", "rtrs-api"),
                "rnbd-api", Set.of("common"),
                "rtrs-api", Set.of("rnbd-client"),
                "common", Set.of());
        List<String> cycle = ArchitectureTest.cycle(graph);
        assertEquals(cycle.get(0), cycle.get(cycle.size() - 1));
        assertEquals(Set.of("rnbd-client", "rtrs-api"), Set.copyOf(cycle));
    }

    @Test
    void aGraphWithoutCycleHasNone() {
        Map<String, Set<String>> graph = Map.of(
                "nbd-gateway", Set.of("rnbd-api", "common"),
                "rnbd-api", Set.of("common"),
                "common", Set.of());
        assertEquals(List.of(), ArchitectureTest.cycle(graph));
    }

    @Test
    void anImportUpTheLayersIsFound() {
        Map<String, Set<String>> graph = Map.of(
                "rtrs-client", Set.of("rdma-api", "rnbd-api"),
                "telemetry", Set.of("command-support", "nbd-gateway-api"));
        assertEquals(List.of("rtrs-client (transport) -> rnbd-api (block)"), ArchitectureTest.upwardImports(graph));
    }

    @Test
    void aBundleOfNoLayerIsRefused() {
        assertThrows(AssertionError.class, () -> Layers.of("storage-thing"));
    }
}

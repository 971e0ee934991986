package io.rnbd.archcheck;

import java.util.Map;

/**
 * The rows of docs/architecture.md's picture, bottom up: {@code common ← verbs ← transport ←
 * block ← gateway, console, observability}. The top three are one rank: they may import each
 * other (the dashboard prints with command-support, rnbd:bench runs loadgen) as long as no
 * cycle forms.
 */
final class Layers {
    record Layer(String name, int rank) {
    }

    static final Layer COMMON = new Layer("common", 0);
    static final Layer VERBS = new Layer("verbs", 1);
    static final Layer TRANSPORT = new Layer("transport", 2);
    static final Layer BLOCK = new Layer("block", 3);
    static final Layer GATEWAY = new Layer("gateway", 4);
    static final Layer CONSOLE = new Layer("console", 4);
    static final Layer OBSERVABILITY = new Layer("observability", 4);

    /** Bundles whose name does not say their layer. */
    private static final Map<String, Layer> BY_NAME = Map.of(
            "common", COMMON,
            "com.ibm.disni", VERBS,
            "loadgen", GATEWAY,
            "command-support", CONSOLE);

    private Layers() {
    }

    /** The layer of a bundle, by its symbolic name; a bundle of no known layer fails the check. */
    static Layer of(String bsn) {
        Layer named = BY_NAME.get(bsn);
        if (named != null) {
            return named;
        }
        if (bsn.endsWith("-command")) {
            return CONSOLE;
        }
        if (bsn.startsWith("telemetry")) {
            return OBSERVABILITY;
        }
        if (bsn.startsWith("nbd-")) {
            return GATEWAY;
        }
        if (bsn.startsWith("rnbd-")) {
            return BLOCK;
        }
        if (bsn.startsWith("rtrs-")) {
            return TRANSPORT;
        }
        if (bsn.startsWith("rdma-")) {
            return VERBS;
        }
        throw new AssertionError("bundle " + bsn + " is in no layer: name it by its layer's prefix (rdma-, rtrs-, "
                + "rnbd-, nbd-, telemetry-, -command) or add it to " + Layers.class.getName());
    }
}

package io.rnbd.fuzz;

import io.rnbd.testkit.LogCapture;

import java.util.List;

/**
 * What the code under test only logs: an exception that escaped a handler on a provider
 * thread ("callback failed", "channel failed", "crashed") or that a server caught as an
 * internal error. Each of those is a bug a fuzz input found; the fuzz test turns it into a
 * failure of that input.
 */
public final class Findings implements AutoCloseable {
    private static final List<String> BUGS = List.of("callback failed", "channel failed", "crashed",
            "internal error", "Exception in thread");
    private final LogCapture log = LogCapture.start();

    public static Findings watch() {
        return new Findings();
    }

    /** Fails if anything logged since {@link #watch()} is a bug. */
    public void assertNone() {
        for (String line : log.lines()) {
            for (String bug : BUGS) {
                if (line.contains(bug)) {
                    throw new AssertionError("the code under test logged a bug: " + line + "\n" + log.text());
                }
            }
        }
    }

    @Override
    public void close() {
        log.close();
    }
}

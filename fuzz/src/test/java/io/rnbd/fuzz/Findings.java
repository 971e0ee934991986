package io.rnbd.fuzz;

import io.rnbd.testkit.LogCapture;

import java.util.List;
import java.util.regex.Pattern;

/**
 * What the code under test only logs: an exception that escaped a handler on a provider
 * thread ("callback failed", "channel failed", "crashed"), a connection the NBD gateway
 * dropped after an internal error, or an uncaught exception. Each of those is a bug a fuzz
 * input found; the fuzz test turns it into a failure of that input.
 *
 * <p>Lines are matched whole, logger and level included, not by substring: the fuzzer once
 * put "callback failed" into an NBD export name, which the gateway logs when it refuses it
 * (NbdGatewayFuzzTest#connection, 60 s run). A peer's text can still forge a line if the
 * code under test logs it with a newline; that can only fail an input, never hide a bug.
 */
public final class Findings implements AutoCloseable {
    private static final List<Pattern> BUGS = List.of(
            Pattern.compile("^\\[[^\\]]*\\] ERROR io\\.rnbd\\.rdma\\.soft\\.internal\\.SoftReactor - "
                    + "(callback failed|\\S+: channel failed|\\S+ crashed)"),
            Pattern.compile("^\\[[^\\]]*\\] WARN io\\.rnbd\\.nbd\\.gateway\\.internal\\.NbdConnection - NBD client "
                    + "\\S+ dropped after an internal error"),
            Pattern.compile("^Exception in thread \""));
    private final LogCapture log = LogCapture.start();

    public static Findings watch() {
        return new Findings();
    }

    /** Fails if anything logged since {@link #watch()} is a bug. */
    public void assertNone() {
        for (String line : log.lines()) {
            for (Pattern bug : BUGS) {
                if (bug.matcher(line).find()) {
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

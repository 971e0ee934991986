package io.rnbd.fuzz;

import com.code_intelligence.jazzer.api.BugDetectors;

/**
 * The network fuzz tests talk to their own servers over loopback, which Jazzer's SSRF
 * detector reports as "connection to a destination from untrusted data" (its first report
 * here was exactly that, on an empty input). Loopback is allowed, and nothing else: a
 * connection anywhere else is still reported.
 */
public final class Loopback {
    private Loopback() {
    }

    /** Call before the first connection of a fuzz test; it holds for the JVM. */
    public static void allow() {
        BugDetectors.allowNetworkConnections((host, port) -> "localhost".equals(host) || host.startsWith("127."));
    }
}

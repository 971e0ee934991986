package io.rnbd.fuzz;

import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The fuzz tests' bug detector: it sees the real bug lines, and not a peer's text that quotes them. */
class FindingsTest {

    @Test
    void anExceptionEscapingASoftCallbackIsABug() {
        try (Findings f = Findings.watch()) {
            LoggerFactory.getLogger("io.rnbd.rdma.soft.internal.SoftReactor")
                    .error("callback failed (a bug in the handler)", new IllegalStateException("boom"));
            assertThrows(AssertionError.class, f::assertNone);
        }
    }

    @Test
    void anNbdInternalErrorIsABug() {
        try (Findings f = Findings.watch()) {
            LoggerFactory.getLogger("io.rnbd.nbd.gateway.internal.NbdConnection")
                    .warn("NBD client {} dropped after an internal error", "127.0.0.1:4000");
            assertThrows(AssertionError.class, f::assertNone);
        }
    }

    /** What NbdGatewayFuzzTest#connection's fuzzer did: an export name quoting the marker. */
    @Test
    void aPeersTextQuotingAMarkerIsNot() {
        try (Findings f = Findings.watch()) {
            LoggerFactory.getLogger("io.rnbd.nbd.gateway.internal.NbdConnection")
                    .warn("NBD client {} dropped: ENOENT: no export named '{}'", "127.0.0.1:4000",
                            "  callback failed crashed internal error");
            assertDoesNotThrow(f::assertNone);
        }
    }
}

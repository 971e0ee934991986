package io.rnbd.rdma.disni.internal;

/**
 * Provider tuning.
 *
 * @param cmTimeoutMs       rdma_resolve_addr/rdma_resolve_route timeout
 * @param completionThreads completion threads per device (1-{@value #MAX_COMPLETION_THREADS}), each
 *                          with its own completion channel; a device's queue pairs are spread over
 *                          them, each new one to the thread with the fewest
 */
public record DisniSettings(int cmTimeoutMs, int completionThreads) {
    public static final int MAX_COMPLETION_THREADS = 64;

    public DisniSettings {
        if (cmTimeoutMs <= 0) {
            throw new IllegalArgumentException("cm timeout must be positive");
        }
        if (completionThreads < 1 || completionThreads > MAX_COMPLETION_THREADS) {
            throw new IllegalArgumentException(
                    "completion threads must be 1-" + MAX_COMPLETION_THREADS + ": " + completionThreads);
        }
    }

    /** One completion thread per device. */
    public DisniSettings(int cmTimeoutMs) {
        this(cmTimeoutMs, 1);
    }
}

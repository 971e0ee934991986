package io.rnbd.rdma.disni.internal;

/**
 * Provider tuning.
 *
 * @param cmTimeoutMs rdma_resolve_addr/rdma_resolve_route timeout
 */
public record DisniSettings(int cmTimeoutMs) {
    public DisniSettings {
        if (cmTimeoutMs <= 0) {
            throw new IllegalArgumentException("cm timeout must be positive");
        }
    }
}

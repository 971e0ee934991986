package io.rnbd.rdma.disni.internal;

import java.util.List;

/**
 * What the provider is doing, for logs and the console.
 *
 * @param active  true when at least one device is registered
 * @param reason  why no (or not every) adapter is in service; empty when all are
 * @param devices names of the registered devices
 */
public record ProviderStatus(boolean active, String reason, List<String> devices) {
    public ProviderStatus {
        devices = List.copyOf(devices);
    }

    /** "dormant: <reason>" or "active: rxe0, mlx5_0" (+ reason for the others). */
    public String line() {
        if (!active) {
            return "dormant: " + reason;
        }
        return "active: " + String.join(", ", devices) + (reason.isEmpty() ? "" : " (" + reason + ")");
    }
}

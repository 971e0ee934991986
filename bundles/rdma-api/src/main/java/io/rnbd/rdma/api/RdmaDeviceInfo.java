package io.rnbd.rdma.api;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A snapshot of one registered device for consoles and diagnostics
 * ({@code rdma dev show}).
 *
 * @param name      {@link RdmaDevice#name()}
 * @param provider  {@link RdmaDevice#provider()}
 * @param nodeId    {@link RdmaDevice#nodeId()}
 * @param linkState port state when the snapshot was taken
 * @param addresses IP addresses, as text
 * @param clients   {@link IbClient#clientName()} of every client the device is added to
 * @param counters  {@link RdmaDevice#counters()}, in the provider's order
 */
public record RdmaDeviceInfo(String name, String provider, String nodeId, LinkState linkState,
                             List<String> addresses, List<String> clients, Map<String, Long> counters) {
    public RdmaDeviceInfo {
        addresses = List.copyOf(addresses);
        clients = List.copyOf(clients);
        counters = Collections.unmodifiableMap(new LinkedHashMap<>(counters));
    }

    /** A device without counters. */
    public RdmaDeviceInfo(String name, String provider, String nodeId, LinkState linkState, List<String> addresses,
                          List<String> clients) {
        this(name, provider, nodeId, linkState, addresses, clients, Map.of());
    }
}

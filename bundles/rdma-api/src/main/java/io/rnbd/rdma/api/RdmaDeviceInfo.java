package io.rnbd.rdma.api;

import java.util.List;

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
 */
public record RdmaDeviceInfo(String name, String provider, String nodeId, LinkState linkState,
                             List<String> addresses, List<String> clients) {
    public RdmaDeviceInfo {
        addresses = List.copyOf(addresses);
        clients = List.copyOf(clients);
    }
}

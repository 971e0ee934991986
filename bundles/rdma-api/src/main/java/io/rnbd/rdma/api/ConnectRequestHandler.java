package io.rnbd.rdma.api;

/** Receives a listener's incoming connection requests on a provider thread. */
@FunctionalInterface
public interface ConnectRequestHandler {
    void onConnectRequest(ConnectRequest request);
}

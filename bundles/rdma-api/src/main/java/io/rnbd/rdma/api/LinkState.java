package io.rnbd.rdma.api;

/** Port state as ibv_port_state reports it, reduced to what the transport acts on. */
public enum LinkState {
    DOWN,
    INIT,
    ACTIVE
}

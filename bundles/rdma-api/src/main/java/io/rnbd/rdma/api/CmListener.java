package io.rnbd.rdma.api;

import java.net.InetSocketAddress;

/** A listening CM id. Closing it stops accepting; established connections stay. */
public interface CmListener extends AutoCloseable {
    RdmaDevice device();

    /** Where it listens (with the actual port when 0 was asked for). */
    InetSocketAddress localAddress();

    @Override
    void close();
}

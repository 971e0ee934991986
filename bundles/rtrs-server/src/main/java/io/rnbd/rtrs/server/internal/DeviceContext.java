package io.rnbd.rtrs.server.internal;

import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.RdmaDevice;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What the server holds on one device between add and remove: the {@link Acceptor}'s, lent
 * to the paths on it (their protection domain, the connections to close with the device).
 */
final class DeviceContext {
    final RdmaDevice device;
    final ProtectionDomain pd;
    final List<CmListener> listeners = new CopyOnWriteArrayList<>();
    /** The connections accepted on the device, closed with it. */
    final Set<Connection> cons = ConcurrentHashMap.newKeySet();

    DeviceContext(RdmaDevice device, ProtectionDomain pd) {
        this.device = device;
        this.pd = pd;
    }
}

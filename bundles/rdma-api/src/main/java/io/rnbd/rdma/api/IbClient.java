package io.rnbd.rdma.api;

/**
 * A user of RDMA devices, registered as an OSGi service (the kernel's {@code ib_client}).
 *
 * <p>The device registry calls {@link #add} once for every device that exists while the
 * client is registered, and {@link #remove} once for every device it was added, when the
 * device or the client goes. Calls are serialised: never two at once for one client.
 * {@code remove} must release everything the client created on the device before it
 * returns (listeners, queue pairs, memory regions, protection domains).
 */
public interface IbClient {
    /** Short name for logs, e.g. {@code rtrs-server}. */
    default String clientName() {
        return getClass().getSimpleName();
    }

    void add(RdmaDevice device);

    void remove(RdmaDevice device);
}

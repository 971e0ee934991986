package io.rnbd.rdma.disni.internal;

import io.rnbd.rdma.api.RdmaDevice;

/** A device the provider opened and must flush when the adapter goes. */
public interface ManagedDevice extends RdmaDevice, AutoCloseable {
    /** Newer sysfs facts (link state, addresses) from the last scan. */
    void update(SysfsDevice info);

    /** Flush: listeners close, queue pairs see DEVICE_REMOVAL and flush, threads stop. */
    @Override
    void close();
}

package io.rnbd.rdma.disni.internal;

import io.rnbd.rdma.api.RdmaDevice;

/** A device the provider opened and must flush when the adapter goes. */
public interface ManagedDevice extends RdmaDevice, AutoCloseable {
    /**
     * Who to tell when the kernel announces the device's removal (RDMA_CM_EVENT_DEVICE_REMOVAL)
     * before sysfs shows it: the provider then unpublishes and flushes at once, which lets
     * the kernel finish the removal. Called on a provider thread; must not block.
     */
    default void onRemoval(Runnable hook) {
    }

    /** Newer sysfs facts (link state, addresses) from the last scan. */
    void update(SysfsDevice info);

    /** Flush: listeners close, queue pairs see DEVICE_REMOVAL and flush, threads stop. */
    @Override
    void close();
}

package io.rnbd.rdma.disni.internal;

import io.rnbd.rdma.api.RdmaDevice;

/** Where the provider publishes devices (the OSGi service registry in production). */
public interface DeviceListener {
    void deviceAdded(RdmaDevice device);

    /** Called BEFORE the device is flushed, so clients let go of a still-working device. */
    void deviceRemoved(RdmaDevice device);

    default void statusChanged(ProviderStatus status) {
    }
}

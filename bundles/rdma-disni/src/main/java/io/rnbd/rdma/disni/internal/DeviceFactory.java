package io.rnbd.rdma.disni.internal;

import io.rnbd.rdma.api.RdmaException;

/** Opens an adapter found in sysfs. */
@FunctionalInterface
public interface DeviceFactory {
    ManagedDevice open(SysfsDevice info) throws RdmaException;
}

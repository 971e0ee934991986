package io.rnbd.rdma.api;

import java.util.List;

/** Read-only view of the device registry (implemented by rdma-core) for consoles. */
public interface RdmaAdmin {
    /** Every device the registry currently tracks, sorted by name. */
    List<RdmaDeviceInfo> devices();
}

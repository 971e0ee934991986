package io.rnbd.rdma.soft.internal;

import io.rnbd.rdma.api.RdmaDevice;

/**
 * The conformance suite again with devices that kill an rkey with a call when asked
 * ({@link SoftDevice#invalidateAtOnce}), as DiSNI does on an adapter without memory windows:
 * invalidateNow's "true" half, which the other soft runs see answered false.
 */
class SoftProviderAtOnceConformanceTest extends SoftProviderConformanceTest {
    @Override
    protected RdmaDevice openDevice(int index) throws Exception {
        SoftDevice d = (SoftDevice) super.openDevice(index);
        d.invalidateAtOnce(true);
        return d;
    }
}

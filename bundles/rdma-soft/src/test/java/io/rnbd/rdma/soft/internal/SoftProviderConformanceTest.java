package io.rnbd.rdma.soft.internal;

import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.testkit.ProviderConformanceSuite;

import java.net.InetAddress;

/** The soft provider against the conformance suite: device 0 on 127.0.0.1, device 1 on 127.0.0.2. */
class SoftProviderConformanceTest extends ProviderConformanceSuite {
    @Override
    protected RdmaDevice openDevice(int index) throws Exception {
        return new SoftDevice("soft" + index, InetAddress.getByName("127.0.0." + (index + 1)));
    }

    @Override
    protected void removeDevice(RdmaDevice device) {
        ((SoftDevice) device).close();
    }
}

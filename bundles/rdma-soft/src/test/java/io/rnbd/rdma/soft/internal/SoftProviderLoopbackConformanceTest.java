package io.rnbd.rdma.soft.internal;

import io.rnbd.rdma.api.LinkState;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.testkit.rdma.ProviderConformanceSuite;

import java.net.InetAddress;

/**
 * The conformance suite with both ends of every connection on one device, as the appliance's
 * default profile has each path: every connection goes over the device's loopback (a Unix
 * socket, {@link SoftLoopback}), and every contract must hold there as over TCP. Device removal
 * takes both ends down here; {@link SoftLoopbackTest} covers it, and that connections to
 * the device itself do take the loopback.
 */
class SoftProviderLoopbackConformanceTest extends ProviderConformanceSuite {
    private SoftDevice shared;

    @Override
    protected RdmaDevice openDevice(int index) throws Exception {
        if (shared == null || shared.linkState() == LinkState.DOWN) {
            shared = new SoftDevice("lo", InetAddress.getByName("127.0.0.1"));
        }
        return shared;
    }

    @Override
    protected void removeDevice(RdmaDevice device) {
        ((SoftDevice) device).close();
    }

    @Override
    protected boolean canRemoveDevices() {
        return false;
    }
}

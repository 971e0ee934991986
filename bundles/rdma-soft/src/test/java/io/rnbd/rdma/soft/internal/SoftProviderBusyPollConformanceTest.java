package io.rnbd.rdma.soft.internal;

import io.rnbd.rdma.api.RdmaDevice;

import java.net.InetAddress;

/**
 * The conformance suite again with busy polling (poll.usec 200) on two IO threads per
 * device: work posted while a thread polls, instead of sleeping in its selector, must be
 * picked up without a wakeup and every contract must still hold.
 */
class SoftProviderBusyPollConformanceTest extends SoftProviderConformanceTest {
    @Override
    protected RdmaDevice openDevice(int index) throws Exception {
        return new SoftDevice("soft" + index, InetAddress.getByName("127.0.0." + (index + 1)), 2, 200);
    }
}

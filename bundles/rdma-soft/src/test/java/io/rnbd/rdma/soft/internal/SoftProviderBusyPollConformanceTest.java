package io.rnbd.rdma.soft.internal;

import io.rnbd.common.AdaptivePoll;
import io.rnbd.common.SpareCpu;

import io.rnbd.rdma.api.RdmaDevice;

import java.net.InetAddress;
import java.nio.file.Path;

/**
 * The conformance suite again with busy polling (a fixed 200 us window, not the adaptive one,
 * so that every idle period polls) on two IO threads per device: work posted while a thread polls, instead of sleeping in its selector, must be
 * picked up without a wakeup and every contract must still hold. The spare-CPU probe reads
 * a file that does not exist, so it always says yes and the threads poll whatever else the
 * machine runs.
 */
class SoftProviderBusyPollConformanceTest extends SoftProviderConformanceTest {
    @Override
    protected RdmaDevice openDevice(int index) throws Exception {
        return new SoftDevice("soft" + index, InetAddress.getByName("127.0.0." + (index + 1)), 2, 200,
                n -> AdaptivePoll.fixed(n, new SpareCpu(Path.of("/nonexistent/loadavg"), 1), System::nanoTime));
    }
}

package io.rnbd.rdma.soft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.testkit.rdma.ProviderConformanceSuite;

import org.junit.jupiter.api.AfterAll;

import java.net.InetAddress;
import java.util.List;
import java.util.stream.Collectors;

/** The soft provider against the conformance suite: device 0 on 127.0.0.1, device 1 on 127.0.0.2. */
class SoftProviderConformanceTest extends ProviderConformanceSuite {
    /** IO threads per device. */
    protected int ioThreads() {
        return 1;
    }

    @Override
    protected RdmaDevice openDevice(int index) throws Exception {
        return new SoftDevice("soft" + index, InetAddress.getByName("127.0.0." + (index + 1)), ioThreads());
    }

    @Override
    protected void removeDevice(RdmaDevice device) {
        ((SoftDevice) device).close();
    }

    @AfterAll
    static void noDeviceThreadOutlivesItsDevice() {
        List<String> left = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("rdma-soft-"))
                .map(Thread::getName).collect(Collectors.toList());
        assertEquals(List.of(), left);
    }
}

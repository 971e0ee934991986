package io.rnbd.rdma.soft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.testkit.ProviderConformanceSuite;

import org.junit.jupiter.api.AfterAll;

import java.net.InetAddress;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The conformance suite again with three IO threads per device: listeners on the first,
 * queue pairs spread over all three, so every contract (ordering, errors, flush on close
 * and on removal, ports freed) must hold across threads too.
 */
class SoftProviderMultiThreadConformanceTest extends ProviderConformanceSuite {
    @Override
    protected RdmaDevice openDevice(int index) throws Exception {
        return new SoftDevice("mt" + index, InetAddress.getByName("127.0.0." + (index + 1)), 3);
    }

    @Override
    protected void removeDevice(RdmaDevice device) {
        ((SoftDevice) device).close();
    }

    @AfterAll
    static void noDeviceThreadOutlivesItsDevice() {
        List<String> left = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("rdma-soft-mt"))
                .map(Thread::getName).collect(Collectors.toList());
        assertEquals(List.of(), left);
    }
}

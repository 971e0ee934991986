package io.rnbd.rdma.disni;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rnbd.rdma.disni.internal.DisniRuntime;
import io.rnbd.rdma.disni.internal.SysfsDevice;
import io.rnbd.rdma.disni.internal.SysfsScanner;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * What the hardware tests need: an RDMA device carrying $RDMA_TEST_ADDR and a loadable
 * libdisni.so. Without them the tests are skipped with the reason, except under
 * {@code -Drnbd.rdma.require=true} (set by rxe/run-rxe-tests.sh in the guest), where a
 * missing prerequisite fails instead of passing silently.
 */
final class RdmaTestEnv {
    private static final DisniRuntime RUNTIME = new DisniRuntime();
    /** One scanner for the whole run: it reads the GID tables again only when something changed. */
    private static final SysfsScanner SYSFS = new SysfsScanner(Path.of("/sys/class/infiniband"));

    private RdmaTestEnv() {
    }

    static void require(boolean condition, String reason) {
        if (Boolean.getBoolean("rnbd.rdma.require")) {
            assertTrue(condition, reason);
        } else {
            assumeTrue(condition, reason);
        }
    }

    /** The device whose addresses include $RDMA_TEST_ADDR, or skip/fail. */
    static SysfsDevice device() {
        return device("RDMA_TEST_ADDR");
    }

    /** A second device, carrying $RDMA_TEST_ADDR2 (rxe1 in the guest), or skip/fail. */
    static SysfsDevice device2() {
        return device("RDMA_TEST_ADDR2");
    }

    private static SysfsDevice device(String env) {
        String addr = System.getenv(env);
        require(addr != null && !addr.isBlank(),
                env + " not set: no RDMA device on this machine (rxe/run-rxe-tests.sh runs these tests in a soft-RoCE VM)");
        Optional<String> noNative = RUNTIME.unavailableReason();
        require(noNative.isEmpty(), noNative.orElse(""));
        InetAddress a;
        try {
            a = InetAddress.getByName(addr);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(env + " " + addr, e);
        }
        Optional<SysfsDevice> dev = SYSFS.scan().values().stream()
                .filter(d -> d.addresses().contains(a)).findFirst();
        require(dev.isPresent(), "no RDMA device under /sys/class/infiniband carries " + addr);
        return dev.get();
    }

    static InetAddress address() {
        return address("RDMA_TEST_ADDR");
    }

    static InetAddress address2() {
        return address("RDMA_TEST_ADDR2");
    }

    private static InetAddress address(String env) {
        try {
            return InetAddress.getByName(System.getenv(env));
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A host-sized wait stretched by -Drnbd.rdma.timeout.factor (20 under TCG). */
    static Duration timeout(Duration host) {
        return host.multipliedBy(Math.max(1, Integer.getInteger("rnbd.rdma.timeout.factor", 1)));
    }
}

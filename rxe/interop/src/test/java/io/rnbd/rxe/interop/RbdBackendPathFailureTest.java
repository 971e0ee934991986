package io.rnbd.rxe.interop;

import static io.rnbd.rxe.interop.LinuxRnbd.path;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.rnbd.rnbd.backend.rbd.internal.RbdBackend;
import io.rnbd.rnbd.server.internal.ExportConfig;
import io.rnbd.rxe.interop.LinuxRnbd.MapSpec;
import io.rnbd.rxe.interop.LinuxRnbd.Mapped;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link SlowBackendPathFailureTest} with the production backend a request really waits on:
 * Linux's rnbd-client on an appliance export of a Ceph RBD image, Ceph itself (one mon, one OSD
 * on memstore, itests/ceph/one-node.sh) running inside the guest from the host's binaries. Two
 * paths, and {@link SlowBackendPathFailureTest#cutTheSecondPathTwiceUnderFio}: fio writing 128 KiB
 * requests at depth 16 and verifying every block, the second path disconnected, reconnected, then
 * its link taken down: zero IO errors, zero verify errors, the first path connected throughout.
 *
 * <p>Not in the CI guest step's list: Ceph under TCG takes minutes to start and answers each
 * request in milliseconds, which the 45-minute budget cannot carry on two kernels. The same logic
 * runs in CI on a dm-delay device (SlowBackendPathFailureTest); this class runs by
 * {@code rxe/run-rbd-guest.sh}, which fails, not skips, when Ceph cannot start.
 */
class RbdBackendPathFailureTest {
    @RegisterExtension
    static final LinuxModules linux = LinuxModules.eachTest();

    private static final int PORT = 1239;
    private static final String SESS = "interop-rbd";
    private static final int MON_PORT = 3300;

    @TempDir
    Path tmp;
    private Mapped mapped;
    private Path cephDir;

    @AfterEach
    void stopCeph() {
        if (cephDir != null) {
            Guest.run(Guest.timeout(Duration.ofSeconds(30)), "bash", oneNode(), "stop", cephDir.toString());
        }
    }

    private static String oneNode() {
        return Path.of(System.getProperty("user.dir")).resolve("itests/ceph/one-node.sh").toString();
    }

    @Test
    void fioVerifiesThroughADisconnectAndALinkDownOnAnRbdImage() throws Exception {
        LinuxRnbd.unloadAll();
        cephDir = tmp.resolve("ceph");
        Guest.step("start a one-node Ceph cluster in the guest");
        String started = Guest.sh(Guest.timeout(Duration.ofSeconds(30)),
                "ONE_NODE_MEMSTORE_MIB=384 ONE_NODE_WATCH_TIMEOUT=30 ONE_NODE_WAIT_FACTOR="
                        + Integer.getInteger("rnbd.rdma.timeout.factor", 1)
                        + " bash " + oneNode() + " start " + cephDir + " " + MON_PORT);
        String conf = value(started, "CEPH_CONF=");
        String keyring = value(started, "CEPH_KEYRING_RNBD=");
        try (Appliance a = Appliance.onDisni(List.of(Guest.addr(), Guest.linkDownAddr()), PORT)) {
            RbdBackend rbd = new RbdBackend();
            assertNull(rbd.dormantReason(), "the RBD backend loads librbd in the guest");
            a.addBackend("rbd", rbd);
            a.export(new ExportConfig("rbd0", "rbd", false, Set.of(), 0,
                    Map.of("image", "rnbd-guest", "conf", conf, "id", "rnbd", "keyring", keyring,
                            "create.size", Long.toString(64L << 20))));
            LinuxRnbd.loadClient();
            mapped = LinuxRnbd.map(MapSpec.of(SESS, "rbd0", path(Guest.addr()), path(Guest.linkDownAddr())).destPort(PORT));
            assertEquals(64L << 20, mapped.size());
            SlowBackendPathFailureTest.cutTheSecondPathTwiceUnderFio(a, mapped, SESS);
            LinuxRnbd.unmap(mapped, false);
            mapped = null;
        }
    }

    private static String value(String output, String prefix) {
        return output.lines().filter(l -> l.startsWith(prefix)).map(l -> l.substring(prefix.length())).findFirst()
                .orElseThrow(() -> new AssertionError("one-node.sh printed no " + prefix + ":\n" + output));
    }
}

package io.rnbd.rnbd.backend.rbd.internal;

import io.rnbd.rnbd.api.SharedDevice;
import io.rnbd.testkit.block.SharedDeviceContractTest;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The takeover contract on real images of the test cluster: every open is its own cluster
 * connection (client instance), as each appliance server's is, so a takeover really breaks,
 * blocklists and acquires through the monitors and the OSD.
 */
@ExtendWith(CephCluster.Extension.class)
class RbdSharedContractTest extends SharedDeviceContractTest {
    private static CephCluster ceph;
    private static RbdBackend backend;

    @BeforeAll
    static void cluster(CephCluster cluster) {
        ceph = cluster;
        backend = new RbdBackend(cluster.settings());
    }

    @AfterAll
    static void stopBackend() {
        if (backend != null) {
            backend.close();
        }
    }

    @Override
    protected SharedDevice openShared(String image) throws IOException {
        Map<String, String> params = new HashMap<>(ceph.params(image));
        params.put("create.size", Long.toString(SIZE));
        return backend.openShared(params);
    }
}

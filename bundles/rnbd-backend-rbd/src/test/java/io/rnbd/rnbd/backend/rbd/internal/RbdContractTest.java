package io.rnbd.rnbd.backend.rbd.internal;

import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.testkit.block.BlockDeviceContractTest;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/** The block-device contract every backend passes, on fresh RBD images of the test cluster. */
@ExtendWith(CephCluster.Extension.class)
class RbdContractTest extends BlockDeviceContractTest {
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
    protected BlockDevice open(long size, boolean readOnly) throws IOException {
        String image = CephCluster.newImage("contract");
        Map<String, String> params = new HashMap<>(ceph.params(image));
        if (readOnly) {
            backend.open(Map.of("image", image, "create.size", Long.toString(size)), false).close();
        } else {
            params.put("create.size", Long.toString(size));
        }
        return backend.open(params, readOnly);
    }
}

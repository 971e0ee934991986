package io.rnbd.rdma.disni;

import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.disni.internal.DisniDevice;
import io.rnbd.rdma.disni.internal.DisniSettings;
import io.rnbd.testkit.rdma.ProviderConformanceSuite;

/**
 * The provider conformance suite on a real verbs device: both test devices are the
 * adapter carrying $RDMA_TEST_ADDR (soft-RoCE in the rxe VM), opened as two provider
 * devices so that removing one leaves the other's connections to see a disconnect.
 * Skipped with the reason where there is no RDMA device (see {@link RdmaTestEnv}).
 */
class DisniProviderConformanceTest extends ProviderConformanceSuite {
    @Override
    protected RdmaDevice openDevice(int index) throws Exception {
        return DisniDevice.open(RdmaTestEnv.device(), new DisniSettings((int) TIMEOUT.toMillis()));
    }

    @Override
    protected void removeDevice(RdmaDevice device) {
        ((DisniDevice) device).close();
    }

    /** The IB CM's REJ carries its own reason (28, consumer defined), not the rejecter's. */
    @Override
    protected boolean carriesRejectReason() {
        return false;
    }

    /** Regions are ibv_reg_mr registrations: only fast-registered ones and memory windows can be remotely invalidated. */
    @Override
    protected boolean canInvalidateRegisteredRegionsRemotely() {
        return false;
    }
}

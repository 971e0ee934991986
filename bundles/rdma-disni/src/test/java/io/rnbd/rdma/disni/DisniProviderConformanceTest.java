package io.rnbd.rdma.disni;

import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.WcStatus;
import io.rnbd.rdma.disni.internal.DisniDevice;
import io.rnbd.rdma.disni.internal.DisniSettings;
import io.rnbd.testkit.rdma.ProviderConformanceSuite;
import java.util.Set;

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

    /**
     * The kernel's rxe decides, not the provider (the suite checks the provider's part for
     * every kernel: the request completes in error with its id, the QP goes to ERROR). Seen in
     * the guest: 6.1's rxe completes the SEND with LOC_PROT_ERR; 6.12's and 7.3's move the QP to
     * ERROR in the requester and flush the failing request (WR_FLUSH_ERR). On hardware the
     * status is the adapter's: LOC_PROT_ERR as the verbs specification says.
     */
    @Override
    protected Set<WcStatus> foreignRegionSendStatus() {
        return RdmaTestEnv.device().name().startsWith("rxe") ? rxeForeignRegionSendStatus(System.getProperty("os.version")) : Set.of(WcStatus.LOC_PROT_ERR);
    }

    /** What Linux's rxe gives, by kernel release ("6.1.0-56-amd64", "7.3-amd64"). */
    static Set<WcStatus> rxeForeignRegionSendStatus(String release) {
        String[] v = release.split("[.-]");
        int major = Integer.parseInt(v[0]);
        int minor = Integer.parseInt(v[1]);
        if (major == 6 && minor <= 1 || major < 6) {
            return Set.of(WcStatus.LOC_PROT_ERR);
        }
        if (major == 6 && minor < 12) {
            throw new AssertionError("rxe of Linux " + release + " was never run here: run the suite on it and say what it gives");
        }
        return Set.of(WcStatus.WR_FLUSH_ERR);
    }

    /** On rxe from Linux 6.5 the provider switches a region's remote access off and on: the key comes back. */
    @Override
    protected boolean reregistrationKeepsTheKey(MemoryRegion region) {
        return ((DisniDevice) region.pd().device()).accessToggle();
    }

    /** Regions are ibv_reg_mr registrations: only fast-registered ones and memory windows can be remotely invalidated. */
    @Override
    protected boolean canInvalidateRegisteredRegionsRemotely() {
        return false;
    }
}

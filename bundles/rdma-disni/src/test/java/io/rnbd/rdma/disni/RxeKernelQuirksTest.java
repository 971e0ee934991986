package io.rnbd.rdma.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rnbd.rdma.api.WcStatus;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The per-kernel table of what Linux's rxe answers (DisniProviderConformanceTest), on the host. */
class RxeKernelQuirksTest {
    @Test
    void aForeignRegionsSendIsAProtectionErrorUpTo61AndFlushedFrom612() {
        assertEquals(Set.of(WcStatus.LOC_PROT_ERR), DisniProviderConformanceTest.rxeForeignRegionSendStatus("6.1.0-56-amd64"));
        assertEquals(Set.of(WcStatus.WR_FLUSH_ERR), DisniProviderConformanceTest.rxeForeignRegionSendStatus("6.12.95+deb12-amd64"));
        assertEquals(Set.of(WcStatus.WR_FLUSH_ERR), DisniProviderConformanceTest.rxeForeignRegionSendStatus("7.3-amd64"));
    }

    @Test
    void aKernelNeverRunHasNoExpectationYet() {
        assertThrows(AssertionError.class, () -> DisniProviderConformanceTest.rxeForeignRegionSendStatus("6.6.0-1-amd64"));
    }
}

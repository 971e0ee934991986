package io.rnbd.rdma.disni;

import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.disni.internal.DisniDevice;
import io.rnbd.rdma.disni.internal.DisniSettings;
import io.rnbd.rdma.testkit.ProviderConformanceSuite;
import java.util.Map;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The provider conformance suite on a real verbs device: both test devices are the
 * adapter carrying $RDMA_TEST_ADDR (soft-RoCE in the rxe VM), opened as two provider
 * devices so that removing one leaves the other's connections to see a disconnect.
 * Skipped with the reason where there is no RDMA device (see {@link RdmaTestEnv}).
 *
 * <p>Two suite tests ask for what DiSNI's API cannot do at all; they are reported as
 * skipped with that reason (the suite has no capability hook for them yet, like its
 * {@code canRemoveDevices()}).
 */
@ExtendWith(DisniProviderConformanceTest.DisniCannot.class)
class DisniProviderConformanceTest extends ProviderConformanceSuite {
    @Override
    protected RdmaDevice openDevice(int index) throws Exception {
        return DisniDevice.open(RdmaTestEnv.device(), new DisniSettings((int) TIMEOUT.toMillis()));
    }

    @Override
    protected void removeDevice(RdmaDevice device) {
        ((DisniDevice) device).close();
    }

    static final class DisniCannot implements ExecutionCondition {
        private static final Map<String, String> LIMITS = Map.of(
                "privateDataReachesTheListenerAndRejectCarriesTheReason",
                "DiSNI cannot read a connect request's private data nor send a reject reason",
                "connectingWhereNobodyListensIsUnreachable",
                "DiSNI reports no CM event status: the CM's reject for a missing listener looks like any reject");

        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            String why = context.getTestMethod().map(m -> LIMITS.get(m.getName())).orElse(null);
            return why == null ? ConditionEvaluationResult.enabled("supported")
                    : ConditionEvaluationResult.disabled("not possible through DiSNI: " + why);
        }
    }
}

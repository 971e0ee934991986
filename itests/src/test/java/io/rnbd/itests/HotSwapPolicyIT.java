package io.rnbd.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;

import io.rnbd.rnbd.api.RemoteBlockDevice;

/**
 * Issue #6: the multipath policy bundles are stopped, started and updated (from their own
 * location, with the console's bundle:update) ten times each while verified IO runs over
 * the appliance's two-path session, and the session's policy is switched from the console
 * under IO: not one request fails, not one read mismatches.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class HotSwapPolicyIT extends KarafTestSupport {

    private static final String SESSION = "appliance";
    private static final String[][] POLICIES = {
        {"rtrs-mp-round-robin", "round-robin"},
        {"rtrs-mp-min-inflight", "min-inflight"},
        {"rtrs-mp-min-latency", "min-latency"},
    };
    private static final int ROUNDS = 10;
    /** Requests that must complete between two swaps, so that every swap happens under IO. */
    private static final int IO_BETWEEN_SWAPS = 20;

    @Configuration
    public Option[] config() {
        return new Option[] {applianceOnFreePorts()};
    }

    @Test
    public void policyBundlesStopStartAndUpdateUnderIo() throws Exception {
        RemoteBlockDevice device = waitForDevice("rnbd0");
        awaitBothPathsConnected();
        try (VerifiedIo io = new VerifiedIo(device, 0, 4096, 2048, 4).start()) {
            io.awaitProgress(200, TIMEOUT_MS);
            for (int round = 1; round <= ROUNDS; round++) {
                for (String[] policy : POLICIES) {
                    Bundle bundle = bundle(policy[0]);
                    bundle.stop();
                    awaitPolicyService(policy[1], false);
                    io.awaitProgress(IO_BETWEEN_SWAPS, TIMEOUT_MS);

                    bundle.start();
                    awaitPolicyService(policy[1], true);
                    io.awaitProgress(IO_BETWEEN_SWAPS, TIMEOUT_MS);

                    long modified = bundle.getLastModified();
                    String updated = executeCommandAsAdmin("bundle:update " + bundle.getBundleId());
                    assertFalse("round " + round + ", bundle:update " + policy[0] + ": " + updated,
                            updated.contains("Error"));
                    awaitCondition(policy[0] + " active again after bundle:update",
                            () -> bundle(policy[0]).getState() == Bundle.ACTIVE, TIMEOUT_MS, null);
                    assertTrue("bundle:update did not update " + policy[0], bundle.getLastModified() > modified);
                    awaitPolicyService(policy[1], true);
                    io.awaitProgress(IO_BETWEEN_SWAPS, TIMEOUT_MS);
                    io.assertClean("round " + round + ", after swapping " + policy[0]);
                }
            }
            io.stop();
            io.verifyAll();
            io.assertClean("after " + ROUNDS + " rounds of policy swaps");
        }
        assertMpPolicy("min-inflight", "min-inflight");
    }

    @Test
    public void policySwitchedFromTheConsoleUnderIo() throws Exception {
        RemoteBlockDevice device = waitForDevice("rnbd0");
        awaitBothPathsConnected();
        try (VerifiedIo io = new VerifiedIo(device, 64L << 20, 4096, 2048, 4).start()) {
            io.awaitProgress(200, TIMEOUT_MS);
            for (String[] policy : new String[][] {POLICIES[0], POLICIES[2], POLICIES[1], POLICIES[0], POLICIES[1]}) {
                String name = policy[1];
                assertEquals("rtrs:mp-policy " + SESSION + " " + name, SESSION + ": " + name,
                        executeCommand("rtrs:mp-policy " + SESSION + " " + name).trim());
                assertMpPolicy(name, name);
                io.awaitProgress(200, TIMEOUT_MS);
            }

            // the chosen policy's bundle goes away: the session falls back, says so, and comes back
            Bundle minLatency = bundle("rtrs-mp-min-latency");
            executeCommand("rtrs:mp-policy " + SESSION + " min-latency");
            minLatency.stop();
            try {
                awaitPolicyService("min-latency", false);
                String shown = executeCommand("rtrs:mp-policy " + SESSION).trim();
                assertTrue("rtrs:mp-policy while min-latency is stopped: " + shown,
                        shown.startsWith(SESSION + ": min-latency (not installed; using "));
                io.awaitProgress(200, TIMEOUT_MS);
            } finally {
                minLatency.start();
            }
            awaitCondition("session back on min-latency", () -> executeCommand("rtrs:mp-policy --json " + SESSION)
                    .contains("\"active_mp_policy\":\"min-latency\""), TIMEOUT_MS,
                    () -> executeCommand("rtrs:mp-policy --json " + SESSION));
            io.awaitProgress(200, TIMEOUT_MS);

            assertTrue(executeCommand("rtrs:mp-policy " + SESSION + " fastest").trim()
                    .startsWith("Error: unknown multipath policy 'fastest'"));
            assertEquals(SESSION + ": min-inflight", executeCommand("rtrs:mp-policy " + SESSION + " 1").trim());
            io.awaitProgress(200, TIMEOUT_MS);
            io.stop();
            io.verifyAll();
            io.assertClean("policy switches from the console");
        }
    }

    private void assertMpPolicy(String configured, String active) {
        String json = executeCommand("rtrs:mp-policy --json " + SESSION).trim();
        assertTrue("rtrs:mp-policy --json: " + json, json.contains("\"mp_policy\":\"" + configured + "\""));
        assertTrue("rtrs:mp-policy --json: " + json, json.contains("\"active_mp_policy\":\"" + active + "\""));
    }

    private void awaitBothPathsConnected() throws InterruptedException {
        awaitCondition("both paths of " + SESSION + " connected", () -> {
            String json = executeCommand("rtrs:paths --json " + SESSION);
            return json.split("\"state\":\"CONNECTED\"", -1).length - 1 == 2;
        }, 3 * TIMEOUT_MS, () -> executeCommand("rtrs:paths " + SESSION));
    }

    private void awaitPolicyService(String name, boolean present) throws InterruptedException {
        awaitCondition("policy service " + name + (present ? " registered" : " gone"),
                () -> policyRegistered(name) == present, TIMEOUT_MS, null);
    }

    private boolean policyRegistered(String name) {
        try {
            ServiceReference<?>[] refs = bundleContext.getServiceReferences(
                    "io.rnbd.rtrs.api.MultipathPolicy", "(rtrs.mp.policy=" + name + ")");
            return refs != null && refs.length > 0;
        } catch (InvalidSyntaxException e) {
            throw new IllegalArgumentException(e);
        }
    }
}

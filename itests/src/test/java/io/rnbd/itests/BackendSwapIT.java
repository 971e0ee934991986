package io.rnbd.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;

import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportState;

/**
 * Issue #5: a block backend bundle is stopped and started again while verified IO runs on a
 * device mapped from one of its exports (over the appliance's own two-path session).
 * <ul>
 * <li>file backend: the data survives the bundle, so nothing acknowledged may be lost or
 * corrupted, and IO issued while it is away waits (offline.wait.ms) and then succeeds;</li>
 * <li>memory backend: the same since issue 34: its store outlives the bundle (the framework keeps
 * it), so nothing acknowledged before the stop may be lost either.</li>
 * </ul>
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class BackendSwapIT extends KarafTestSupport {

    private static final int BLOCK = 4096;
    private static final int BLOCKS = 1024;
    private static final int LANES = 4;
    private static final long OFFLINE_WAIT_MS = 120_000;

    @Configuration
    public Option[] config() {
        return new Option[] {applianceOnFreePorts()};
    }

    @Test
    public void fileBackendRestartLosesNothingAcknowledged() throws Exception {
        waitForDevice("rnbd0");
        String image = new File(System.getProperty("karaf.data"), "backend-swap-file0.img").getAbsolutePath();
        factoryConfig("io.rnbd.server.export", "file0", "name", "file0", "backend", "file",
                "backend.path", image, "backend.size", "16m", "offline.wait.ms", Long.toString(OFFLINE_WAIT_MS));
        factoryConfig("io.rnbd.client.map", "rnbd-file0", "device.name", "rnbd-file0",
                "session.name", "appliance", "export.name", "file0", "access.mode", "RW");
        RemoteBlockDevice device = waitForDevice("rnbd-file0");

        swapUnderIo(device, "file0", bundle("rnbd-backend-file"));
    }

    @Test
    public void memoryBackendRestartLosesNothingAcknowledged() throws Exception {
        waitForDevice("rnbd0");
        factoryConfig("io.rnbd.server.export", "mem1", "name", "mem1", "backend", "memory",
                "backend.size", "16m", "offline.wait.ms", Long.toString(OFFLINE_WAIT_MS));
        factoryConfig("io.rnbd.client.map", "rnbd-mem1", "device.name", "rnbd-mem1",
                "session.name", "appliance", "export.name", "mem1", "access.mode", "RW");
        RemoteBlockDevice device = waitForDevice("rnbd-mem1");

        swapUnderIo(device, "mem1", bundle("rnbd-backend-memory"));
    }

    /**
     * Verified IO; the backend bundle stops under it; IO must stall (it waits, it does not
     * fail); the bundle starts again; the stalled IO completes and IO goes on; then every
     * block recorded is read back.
     */
    private void swapUnderIo(RemoteBlockDevice device, String export, Bundle backend) throws Exception {
        RnbdServerAdmin server = waitForService(RnbdServerAdmin.class, null, TIMEOUT_MS);
        awaitCondition("export " + export + " online", () -> state(server, export) == ExportState.ONLINE,
                TIMEOUT_MS, () -> exportLine(server, export));
        try (VerifiedIo io = new VerifiedIo(device, 0, BLOCK, BLOCKS, LANES).start()) {
            io.awaitProgress(500, TIMEOUT_MS);
            int recordedBeforeStop = io.recordedBlocks();

            backend.stop();
            awaitCondition("export " + export + " offline after stopping " + backend.getSymbolicName(),
                    () -> state(server, export) == ExportState.OFFLINE, TIMEOUT_MS, () -> exportLine(server, export));
            // requests already at the backend finish; then every lane waits: no completion, no failure
            io.awaitQuiet(1_000, TIMEOUT_MS);
            assertEquals("lanes waiting while the backend is gone; " + io.summary(), LANES, io.busy());
            io.assertClean("IO while the backend was gone");

            backend.start();
            awaitCondition("export " + export + " online after restarting " + backend.getSymbolicName(),
                    () -> state(server, export) == ExportState.ONLINE, TIMEOUT_MS, () -> exportLine(server, export));
            // the waiting requests complete, and IO goes on
            io.awaitProgress(500 + LANES, TIMEOUT_MS);
            io.stop();
            io.assertClean("IO across the backend restart");
            io.verifyAll();
            io.assertClean("reading back every block written");
            assertTrue("too little was verified to mean anything: " + io.summary()
                    + " (" + recordedBeforeStop + " blocks recorded before the stop)", io.verifiedReads() > 100);
        }
    }

    private static ExportState state(RnbdServerAdmin server, String export) {
        ExportInfo info = find(server, export);
        return info == null ? null : info.state();
    }

    private static String exportLine(RnbdServerAdmin server, String export) {
        return String.valueOf(find(server, export));
    }

    private static ExportInfo find(RnbdServerAdmin server, String export) {
        return server.exports().stream().filter(e -> e.name().equals(export)).findFirst().orElse(null);
    }
}

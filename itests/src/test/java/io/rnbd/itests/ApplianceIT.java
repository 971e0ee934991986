package io.rnbd.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.CoreOptions.composite;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.editConfigurationFilePut;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.Assume;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.ConfigurationAdmin;

import io.rnbd.rnbd.api.RemoteBlockDevice;

/**
 * The distribution as shipped: it boots rnbd-appliance with the default profile from etc/,
 * every appliance bundle is active, every component satisfied, and the mapped device rnbd0
 * (export mem0 over the appliance's own two-path session) carries data for a real NBD client.
 * Only the ports differ from the shipped profile, so a running appliance does not collide.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ApplianceIT extends KarafTestSupport {

    private static final int RTRS_PORT = Ports.free();
    private static final int NBD_PORT = Ports.free();

    @Configuration
    public Option[] config() {
        return new Option[] {composite(
                distribution(),
                editConfigurationFilePut("etc/io.rnbd.rtrs.server.cfg", "port", Integer.toString(RTRS_PORT)),
                editConfigurationFilePut("etc/io.rnbd.rtrs.client.session-appliance.cfg", "paths",
                        "127.0.0.1@127.0.0.1:" + RTRS_PORT + ",127.0.0.2@127.0.0.2:" + RTRS_PORT),
                editConfigurationFilePut("etc/io.rnbd.nbd.gateway.cfg", "port", Integer.toString(NBD_PORT)),
                // the configuration runs in the failsafe JVM, the test inside Karaf: hand the port over
                systemProperty("rnbd.itest.nbd.port").value(Integer.toString(NBD_PORT)))};
    }

    @Test
    public void bootsTheApplianceFeatureButNotDisni() throws Exception {
        assertTrue(featuresService.isInstalled(featuresService.getFeature("rnbd-appliance")));
        String installed = executeCommand("feature:list -i");
        assertTrue(installed, installed.contains("rnbd-appliance"));
        assertFalse("rnbd-rdma-disni needs hardware and must not boot", installed.contains("rnbd-rdma-disni"));
    }

    @Test
    public void everyApplianceBundleIsActiveAndEveryComponentSatisfied() throws Exception {
        List<Bundle> rnbd = new ArrayList<>();
        for (Bundle bundle : bundleContext.getBundles()) {
            if (bundle.getLocation().startsWith("mvn:io.rnbd/")) {
                rnbd.add(bundle);
            }
        }
        assertTrue("appliance bundles missing: " + rnbd, rnbd.size() >= 20);
        awaitNoProblems("the default profile", () -> problems(rnbd), TIMEOUT_MS);
    }

    @Test
    public void defaultProfileIsLoadedWithItsTypes() throws Exception {
        ConfigurationAdmin configAdmin = waitForService(ConfigurationAdmin.class, null, TIMEOUT_MS);
        assertFactoryConfig(configAdmin, "io.rnbd.rdma.soft", "soft0", "address", "127.0.0.1");
        assertFactoryConfig(configAdmin, "io.rnbd.rdma.soft", "soft1", "address", "127.0.0.2");
        assertFactoryConfig(configAdmin, "io.rnbd.client.map", "rnbd0", "export.name", "mem0");
        assertFactoryConfig(configAdmin, "io.rnbd.client.map", "rnbd0", "access.mode", "RW");
        assertFactoryConfig(configAdmin, "io.rnbd.server.export", "mem0", "backend.size", "1g");
        assertFactoryConfig(configAdmin, "io.rnbd.server.export", "mem0", "read.only", Boolean.FALSE);
    }

    /** Writes with libnbd's nbdcopy, reads back with qemu's own NBD client. */
    @Test
    public void nbdClientsRoundTripDataThroughTheMappedDevice() throws Exception {
        for (String tool : new String[] {"nbdcopy", "nbdinfo", "qemu-img"}) {
            Assume.assumeTrue(tool + " is not installed (Debian packages libnbd-bin, qemu-utils)", onPath(tool));
        }
        // mapping waits for the session, which may need a reconnect (10 s delay) after boot
        ServiceReference<RemoteBlockDevice> device;
        try {
            device = waitForReference(RemoteBlockDevice.class, "(rnbd.device=rnbd0)");
        } catch (AssertionError e) {
            // no cause: Pax Exam reports the innermost exception of a chain
            throw new AssertionError(e.getMessage() + "; the appliance says:\n" + consoleState());
        }
        // the gateway picks the device up through a dynamic reference: wait until it uses it
        awaitNoProblems("nbd-gateway serving rnbd0",
                () -> usedByGateway(device) ? "" : "rnbd0 not yet used by nbd-gateway", TIMEOUT_MS);

        String uri = "nbd://127.0.0.1:" + System.getProperty("rnbd.itest.nbd.port") + "/rnbd0";
        assertEquals("size of rnbd0 over NBD", Long.toString(1L << 30), run("nbdinfo", "--size", uri).trim());

        Path dir = Files.createTempDirectory("rnbd-itest");
        Path written = dir.resolve("written.bin");
        Path read = dir.resolve("read.bin");
        byte[] data = new byte[4 << 20];
        new Random(42).nextBytes(data);
        Files.write(written, data);
        try {
            run("nbdcopy", written.toString(), uri);
            run("qemu-img", "dd", "-f", "raw", "-O", "raw", "bs=1M", "count=4", "if=" + uri, "of=" + read);
            assertTrue("the 4 MiB read back differ from what was written", Arrays.equals(data, Files.readAllBytes(read)));
        } finally {
            Files.deleteIfExists(written);
            Files.deleteIfExists(read);
            Files.delete(dir);
        }
    }

    private String consoleState() {
        StringBuilder state = new StringBuilder();
        for (String command : new String[] {"rdma:devices", "rtrs:sessions", "rtrs:paths appliance",
                "rtrs:server-sessions", "rnbd:exports", "rnbd:devices"}) {
            state.append("> ").append(command).append('\n').append(executeCommand(command));
        }
        return state.toString();
    }

    private static void assertFactoryConfig(ConfigurationAdmin configAdmin, String factoryPid, String name,
            String key, Object expected) throws Exception {
        String pid = factoryPid + "~" + name;
        org.osgi.service.cm.Configuration[] found = configAdmin.listConfigurations("(service.pid=" + pid + ")");
        assertNotNull("no configuration " + pid, found);
        assertEquals(pid + " " + key, expected, found[0].getProperties().get(key));
    }

    private <T> ServiceReference<T> waitForReference(Class<T> type, String filter) throws Exception {
        waitForService(type, filter, 2 * TIMEOUT_MS);
        return bundleContext.getServiceReferences(type, filter).iterator().next();
    }

    private static boolean usedByGateway(ServiceReference<?> reference) {
        Bundle[] users = reference.getUsingBundles();
        return users != null && Arrays.stream(users).anyMatch(b -> "nbd-gateway".equals(b.getSymbolicName()));
    }

    private static boolean onPath(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator)) {
            if (new File(dir, tool).canExecute()) {
                return true;
            }
        }
        return false;
    }

    /** Runs a tool to completion and returns its output; fails on timeout or a non-zero exit. */
    private static String run(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        boolean done = process.waitFor(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        if (!done) {
            process.destroyForcibly();
        }
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(String.join(" ", command) + " did not finish within " + TIMEOUT_MS + " ms", done);
        assertEquals(String.join(" ", command) + ": " + output, 0, process.exitValue());
        return output;
    }
}

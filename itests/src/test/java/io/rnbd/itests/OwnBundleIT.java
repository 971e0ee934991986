package io.rnbd.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.CoreOptions.composite;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.regex.Pattern;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;

import io.rnbd.rnbd.api.RemoteBlockDevice;

/**
 * Issue 34, item 3: a bundle of the user's own is a first-class citizen. The examples/ projects,
 * built by the reactor exactly as docs/extending.md builds them (their jars handed over by
 * failsafe), are dropped into the appliance's deploy/ folder, on the default profile:
 * <ul>
 * <li>the multipath policy {@code first-path}: listed by {@code rtrs:mp-policies} and JMX with its
 * bundle, a live session switched to it by {@code rtrs:mp-policy} under verified IO, which then
 * goes to the first path only; its jar deleted, the session falls back and not one request
 * fails;</li>
 * <li>the block backend {@code simple-file}: listed by {@code rnbd:backends} and JMX, an export on
 * it made with {@code rnbd:export-add --backend simple-file} and mapped, verified IO on it; its
 * jar deleted, the export goes offline and its IO waits (offline.wait.ms, 20 s by default): no
 * request fails; the jar put back, the export is online again, the waiting IO completes and
 * every block reads back as written.</li>
 * </ul>
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class OwnBundleIT extends KarafTestSupport {
    private static final String SESSION = "appliance";
    private static final int LANES = 4;

    @Configuration
    public Option[] config() {
        return new Option[] {composite(
                defaultProfileOnFreePorts(),
                systemProperty("rnbd.example.policy.jar").value(System.getProperty("rnbd.example.policy.jar")),
                systemProperty("rnbd.example.backend.jar").value(System.getProperty("rnbd.example.backend.jar")))};
    }

    @Test
    public void ownPolicyDroppedIntoDeploySwitchedToUnderIoThenDeleted() throws Exception {
        RemoteBlockDevice device = waitForDevice("rnbd0");
        awaitCondition("both paths connected", () -> connectedPaths() == 2, 3 * TIMEOUT_MS,
                () -> executeCommand("rtrs:paths " + SESSION));
        // the authenticators too are listed with their bundles and the ends using them
        assertTrue(executeCommand("rtrs:authenticators"), matches(executeCommand("rtrs:authenticators"),
                "none[\\s|]+rtrs-auth-none[\\s|]+\\S+[\\s|]+\\d+[\\s|]+0[\\s|]+client,server"));
        assertEquals("client: none\nserver: none", executeCommand("rtrs:auth-method").trim());
        try (VerifiedIo io = new VerifiedIo(device, 0, 4096, 2048, LANES).start()) {
            io.awaitProgress(200, TIMEOUT_MS);

            Path jar = deploy("rnbd.example.policy.jar");
            awaitService("io.rnbd.rtrs.api.MultipathPolicy", "(rtrs.mp.policy=first-path)", true);
            // the client binds the service in the framework's event for it: moments after the registry has it
            awaitCondition("first-path listed with its bundle", () -> matches(executeCommand("rtrs:mp-policies"),
                    "first-path[\\s|]+rnbd-example-mp-first-path[\\s|]+1\\.0\\.0[\\s|]+\\d+[\\s|]+0[\\s|]+-"), TIMEOUT_MS,
                    () -> executeCommand("rtrs:mp-policies"));
            awaitMBean("io.rnbd:type=rtrs-mp-policy,name=first-path,bundle=rnbd-example-mp-first-path", true);

            assertEquals(SESSION + ": first-path", executeCommand("rtrs:mp-policy " + SESSION + " first-path").trim());
            assertTrue(executeCommand("rtrs:mp-policy --json " + SESSION),
                    executeCommand("rtrs:mp-policy --json " + SESSION).contains("\"active_mp_policy\":\"first-path\""));
            assertTrue(matches(executeCommand("rtrs:mp-policies"), "first-path[\\s|]+.*[\\s|]+" + SESSION));
            // the policy routes: the second path carries nothing while the first is up (once what
            // min-inflight sent there before the switch has come back)
            io.awaitProgress(50, TIMEOUT_MS);
            long second = secondPathRequests();
            io.awaitProgress(300, TIMEOUT_MS);
            assertEquals("requests on the second path under first-path; " + executeCommand("rtrs:paths " + SESSION),
                    second, secondPathRequests());

            Files.delete(jar);
            awaitService("io.rnbd.rtrs.api.MultipathPolicy", "(rtrs.mp.policy=first-path)", false);
            String shown = executeCommand("rtrs:mp-policy " + SESSION).trim();
            assertTrue(shown, shown.startsWith(SESSION + ": first-path (not installed; using "));
            awaitMBean("io.rnbd:type=rtrs-mp-policy,name=first-path,bundle=rnbd-example-mp-first-path", false);
            io.awaitProgress(300, TIMEOUT_MS);
            assertTrue(executeCommand("rtrs:mp-policy " + SESSION + " first-path"),
                    executeCommand("rtrs:mp-policy " + SESSION + " first-path")
                            .startsWith("Error: unknown multipath policy 'first-path'"));

            io.stop();
            io.verifyAll();
            io.assertClean("IO across deploying, choosing and deleting a policy of one's own");
        } finally {
            executeCommand("rtrs:mp-policy " + SESSION + " min-inflight");
        }
    }

    @Test
    public void ownBackendDroppedIntoDeployServesAnExportThroughItsJarsDeletionAndReturn() throws Exception {
        waitForDevice("rnbd0");
        Path jar = deploy("rnbd.example.backend.jar");
        awaitService("io.rnbd.rnbd.api.BlockBackend", "(rnbd.backend=simple-file)", true);
        awaitCondition("simple-file listed with its bundle", () -> matches(executeCommand("rnbd:backends"),
                "simple-file[\\s|]+rnbd-example-backend-simple-file[\\s|]+1\\.0\\.0[\\s|]+\\d+[\\s|]+0[\\s|]+-"), TIMEOUT_MS,
                () -> executeCommand("rnbd:backends"));
        awaitMBean("io.rnbd:type=rnbd-backend,name=simple-file,bundle=rnbd-example-backend-simple-file", true);

        String image = new File(System.getProperty("karaf.data"), "own1.img").getAbsolutePath();
        String added = executeCommand("rnbd:export-add --backend simple-file --path " + image + " --size 16m own1");
        assertEquals("export own1 added: online, simple-file, 16.0 MiB", added.trim());
        String mapped = executeCommand("rnbd:map --session " + SESSION + " --export own1 rnbd-own1");
        assertTrue(mapped, mapped.startsWith("rnbd-own1 mapped"));
        RemoteBlockDevice device = waitForDevice("rnbd-own1");
        assertTrue(matches(executeCommand("rnbd:backends"), "simple-file[\\s|]+.*[\\s|]+own1"));

        try (VerifiedIo io = new VerifiedIo(device, 0, 4096, 1024, LANES).start()) {
            io.awaitProgress(300, TIMEOUT_MS);

            Files.delete(jar);
            awaitCondition("own1 offline after its backend's jar is deleted", () -> exportState("own1", "OFFLINE"),
                    TIMEOUT_MS, () -> executeCommand("rnbd:exports"));
            // what was at the backend finished; now every lane waits: no completion, no failure
            io.awaitQuiet(1_000, TIMEOUT_MS);
            assertEquals("lanes waiting while the backend is gone; " + io.summary(), LANES, io.busy());
            io.assertClean("IO while the backend's jar was gone");

            deploy("rnbd.example.backend.jar");
            awaitCondition("own1 online with its backend back", () -> exportState("own1", "ONLINE"), TIMEOUT_MS,
                    () -> executeCommand("rnbd:exports"));
            io.awaitProgress(300 + LANES, TIMEOUT_MS);
            io.stop();
            io.verifyAll();
            io.assertClean("IO across the deletion and return of a backend of one's own");
            assertTrue("too little verified to mean anything: " + io.summary(), io.verifiedReads() > 100);
        }
    }

    // ---- helpers

    /** The example's jar (built by the reactor) copied into deploy/, as a user would. */
    private static Path deploy(String property) throws Exception {
        Path built = Path.of(System.getProperty(property));
        assertTrue("the example is built: " + built, Files.isRegularFile(built));
        Path deploy = Path.of(System.getProperty("karaf.base"), "deploy");
        Files.createDirectories(deploy);
        // through a temporary name: the deployer must never see half a jar
        Path tmp = Files.copy(built, deploy.resolve(built.getFileName() + ".part"), StandardCopyOption.REPLACE_EXISTING);
        return Files.move(tmp, deploy.resolve(built.getFileName()), StandardCopyOption.ATOMIC_MOVE);
    }

    private void awaitService(String type, String filter, boolean present) throws InterruptedException {
        awaitCondition(type + " " + filter + (present ? " registered" : " gone"), () -> {
            try {
                ServiceReference<?>[] refs = bundleContext.getServiceReferences(type, filter);
                return (refs != null && refs.length > 0) == present;
            } catch (InvalidSyntaxException e) {
                throw new IllegalArgumentException(e);
            }
        }, TIMEOUT_MS, () -> executeCommand("bundle:list -t 0 | grep -i example"));
    }

    private void awaitMBean(String name, boolean present) throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName on = new ObjectName(name);
        awaitCondition("MBean " + name + (present ? " registered" : " gone"), () -> server.isRegistered(on) == present,
                TIMEOUT_MS, () -> String.valueOf(queryNames(server)));
    }

    private static Object queryNames(MBeanServer server) {
        try {
            return server.queryNames(new ObjectName("io.rnbd:*"), null);
        } catch (javax.management.MalformedObjectNameException e) {
            return e.toString();
        }
    }

    private int connectedPaths() {
        return executeCommand("rtrs:paths --json " + SESSION).split("\"state\":\"CONNECTED\"", -1).length - 1;
    }

    /** Reads and writes the session's second path has carried. */
    private long secondPathRequests() {
        String json = executeCommand("rtrs:paths --json " + SESSION);
        java.util.regex.Matcher m = Pattern.compile("\"reads\":(\\d+).*?\"writes\":(\\d+)", Pattern.DOTALL)
                .matcher(json.substring(json.indexOf("127.0.0.2@127.0.0.2")));
        assertTrue(json, m.find());
        return Long.parseLong(m.group(1)) + Long.parseLong(m.group(2));
    }

    private boolean exportState(String export, String state) {
        return matches(executeCommand("rnbd:exports --json"), "\"name\":\"" + export + "\"[^}]*\"state\":\"" + state + "\"");
    }

    private static boolean matches(String text, String regex) {
        return Pattern.compile(regex, Pattern.DOTALL).matcher(text).find();
    }
}

package io.rnbd.itests.instance;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static io.rnbd.itests.instance.Appliance.deleteTree;
import static io.rnbd.itests.instance.Appliance.unpackDistribution;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import io.rnbd.itests.instance.Appliance.Result;
import org.junit.After;
import org.junit.Test;

/**
 * Issue 20, item 3: the user's instance (etc/ and data/) lives outside the build output, in
 * $RNBD_HOME, and survives a rebuild. Drives {@code ./appliance} as a user does: the instance is
 * created from the default profile, the appliance started, configured through a file in etc/ and
 * through the console (ConfigAdmin state in data/), stopped; then the distribution is rebuilt
 * (unpacked again from the archive, with a changed default file and a changed bundle, as a new
 * build after {@code git pull} brings) and started again: the edit and the export are still
 * there, the changed bundle runs, untouched defaults followed the new profile. Last,
 * {@code ./appliance reset} gives back the default profile. No Karaf script may say "JAVA_HOME not
 * set" (item 4): JAVA_HOME is unset here and java is found on PATH.
 */
public class ApplianceInstanceIT {
    private static final long BOOT_MS = 180_000;

    private final Path work = Path.of(System.getProperty("rnbd.itest.instance.work", "target/instance-it"));
    private final Path dist = work.resolve("dist");
    private final Path home = work.resolve("home");
    private final Appliance appliance = new Appliance(work, dist, home);

    @After
    public void stopKaraf() throws Exception {
        appliance.close();
    }

    @Test
    public void theInstanceSurvivesARebuildAndResetsToTheDefaultProfile() throws Exception {
        deleteTree(work);
        Files.createDirectories(work);
        unpackDistribution(work, dist);

        // the console before there is an instance: the script says so, not Karaf's "KARAF_BASE is not valid"
        Result early = appliance.run(60_000, "client", "rnbd:devices");
        assertEquals(early.output(), 1, early.exit());
        assertTrue(early.output(), early.output().contains("no appliance instance in " + home.toAbsolutePath()));

        Result created = appliance.run(60_000, "instance");
        assertEquals(created.output(), 0, created.exit());
        assertTrue(created.output(), created.output().contains("new instance in " + home.toAbsolutePath()));
        assertTrue("no etc/ in the instance", Files.isRegularFile(home.resolve("etc/io.rnbd.client.map-rnbd0.cfg")));
        // the user's edits: free ports (the tests share the machine), a shorter reconnect delay
        appliance.isolate();
        appliance.edit("io.rnbd.rtrs.client.session-appliance.cfg", "reconnect.delay.sec", "1");
        int sshPort = appliance.sshPort;
        int nbdPort = appliance.nbdPort;

        appliance.start(BOOT_MS);
        String added = appliance.console("rnbd:export-add --backend memory --size 1m survivor");
        assertTrue(added, added.contains("export survivor added: online"));
        appliance.stop();
        assertTrue("ConfigAdmin keeps the export in data/ (not in etc/)",
                !Files.exists(home.resolve("etc/io.rnbd.server.export-survivor.cfg")));

        // the rebuild: a new distribution where the old one was, with a new default for a file the
        // user never edited and one they did, and one bundle whose content changed
        deleteTree(dist);
        unpackDistribution(work, dist);
        append(dist.resolve("etc/io.rnbd.rdma.soft-soft1.cfg"), "# default of the new build\n");
        append(dist.resolve("etc/io.rnbd.nbd.gateway.cfg"), "# default of the new build\n");
        Path gateway;
        try (Stream<Path> jars = Files.walk(dist.resolve("system/io/rnbd/nbd-gateway"))) {
            gateway = jars.filter(p -> p.toString().endsWith(".jar")).findFirst().orElseThrow();
        }
        addManifestHeader(gateway, "X-Rnbd-Rebuilt", "yes");

        Result restarted = appliance.start(BOOT_MS);
        // Karaf updates the changed bundle as it boots, after the appliance came up on the old one
        appliance.awaitConsole("bundle:headers nbd-gateway", "X-Rnbd-Rebuilt", BOOT_MS);
        appliance.awaitConsole("rnbd:devices", "mapped", BOOT_MS);
        String exports = appliance.console("rnbd:exports");
        assertTrue("the export added through the console before the rebuild:\n" + exports,
                exports.contains("survivor"));
        String gatewayCfg = Files.readString(home.resolve("etc/io.rnbd.nbd.gateway.cfg"));
        assertTrue("the user's edit of a file whose default changed:\n" + gatewayCfg,
                gatewayCfg.contains("port = " + nbdPort));
        assertTrue("the new default beside it", Files.readString(home.resolve("etc/io.rnbd.nbd.gateway.cfg.default"))
                .contains("# default of the new build"));
        assertTrue(restarted.output(), restarted.output().contains("etc/io.rnbd.nbd.gateway.cfg: kept your edit"));
        assertTrue("an untouched file follows the new default",
                Files.readString(home.resolve("etc/io.rnbd.rdma.soft-soft1.cfg")).contains("# default of the new build"));
        assertTrue(appliance.console("rnbd:export-remove survivor").contains("survivor"));
        appliance.stop();

        Result reset = appliance.run(60_000, "reset");
        assertEquals(reset.output(), 0, reset.exit());
        assertTrue(reset.output(), reset.output().contains("moved the old instance to " + home.toAbsolutePath() + "."));
        assertFalse("sshPort back to the default profile's",
                Files.readString(home.resolve("etc/org.apache.karaf.shell.cfg")).contains("sshPort = " + sshPort));
        assertFalse("no state left", Files.exists(home.resolve("data/cache")));
    }

    // ---- files

    private static void append(Path p, String text) throws IOException {
        Files.writeString(p, Files.readString(p) + text);
    }

    /** Rewrites a jar with one more manifest header: a bundle whose content changed. */
    private static void addManifestHeader(Path jar, String name, String value) throws IOException {
        Path tmp = jar.resolveSibling(jar.getFileName() + ".tmp");
        try (JarFile in = new JarFile(jar.toFile())) {
            Manifest m = new Manifest(in.getManifest());
            m.getMainAttributes().put(new Attributes.Name(name), value);
            try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(tmp), m)) {
                Enumeration<JarEntry> entries = in.entries();
                while (entries.hasMoreElements()) {
                    JarEntry e = entries.nextElement();
                    if (e.getName().equalsIgnoreCase("META-INF/MANIFEST.MF")) {
                        continue;
                    }
                    out.putNextEntry(new JarEntry(e.getName()));
                    try (InputStream data = in.getInputStream(e)) {
                        data.transferTo(out);
                    }
                    out.closeEntry();
                }
            }
        }
        Files.move(tmp, jar, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
}

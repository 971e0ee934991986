package io.rnbd.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.service.cm.Configuration.ConfigurationAttribute;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * The distribution as shipped: it boots rnbd-appliance with the default profile from etc/,
 * every appliance bundle is active and every component satisfied.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ApplianceIT extends KarafTestSupport {

    @Configuration
    public Option[] config() {
        return new Option[] {distribution()};
    }

    @Test
    public void bootsTheApplianceFeature() throws Exception {
        assertTrue(featuresService.isInstalled(featuresService.getFeature("rnbd-appliance")));
        String installed = executeCommand("feature:list -i");
        assertTrue(installed, installed.contains("rnbd-appliance"));
        assertTrue("rnbd-rdma-disni needs hardware and must not boot", !installed.contains("rnbd-rdma-disni"));
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
        assertFactoryConfig(configAdmin, "io.rnbd.rtrs.client.session", "appliance", "paths",
                "127.0.0.1@127.0.0.1,127.0.0.2@127.0.0.2");
        assertFactoryConfig(configAdmin, "io.rnbd.client.map", "rnbd0", "export.name", "mem0");
        assertFactoryConfig(configAdmin, "io.rnbd.server.export", "mem0", "backend.size", "1g");
        assertFactoryConfig(configAdmin, "io.rnbd.server.export", "mem0", "read.only", Boolean.FALSE);
        assertEquals("1234", configAdmin.getConfiguration("io.rnbd.rtrs.server", null).getProperties().get("port"));
    }

    private static void assertFactoryConfig(ConfigurationAdmin configAdmin, String factoryPid, String name,
            String key, Object expected) throws Exception {
        org.osgi.service.cm.Configuration[] found = configAdmin.listConfigurations(
                "(service.pid=" + factoryPid + "~" + name + ")");
        assertNotNull("no configuration " + factoryPid + "~" + name, found);
        assertEquals(factoryPid + "~" + name + " " + key, expected, found[0].getProperties().get(key));
        assertTrue(!found[0].getAttributes().contains(ConfigurationAttribute.READ_ONLY));
    }
}

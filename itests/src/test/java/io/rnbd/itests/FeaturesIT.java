package io.rnbd.itests;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.apache.karaf.features.Feature;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;

/**
 * Every rnbd feature, alone, in a container that booted without the appliance: it resolves
 * offline, its bundles start, its components are satisfied, and uninstalling it takes its
 * bundles away again so the next feature meets a clean container. rnbd-rdma-disni is
 * included: without adapters it must still start and simply find no device; so is rnbd-backend-rbd
 * (dormant where librbd is missing).
 * Reports every broken feature at once, not only the first.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class FeaturesIT extends KarafTestSupport {
    /** The features README.md and docs/ document; any further rnbd-* feature is tested too. */
    private static final List<String> SHIPPED = List.of("rnbd-appliance", "rnbd-auth-chap", "rnbd-auth-none",
            "rnbd-backend-file", "rnbd-backend-memory", "rnbd-backend-rbd", "rnbd-client", "rnbd-dashboard",
            "rnbd-jmx", "rnbd-metrics", "rnbd-mp-min-inflight", "rnbd-mp-min-latency", "rnbd-mp-round-robin",
            "rnbd-nbd-gateway", "rnbd-rdma", "rnbd-rdma-disni", "rnbd-rdma-soft", "rnbd-rtrs", "rnbd-rtrs-client",
            "rnbd-rtrs-server", "rnbd-server");

    @Configuration
    public Option[] config() {
        return new Option[] {cleanDistribution()};
    }

    @Test
    public void everyFeatureInstallsAloneIntoACleanContainer() throws Exception {
        assertFalse("the clean container booted the appliance",
                featuresService.isInstalled(featuresService.getFeature("rnbd-appliance")));
        List<String> names = rnbdFeatures();
        List<String> missing = new ArrayList<>(SHIPPED);
        missing.removeAll(names);
        assertTrue("features the README documents are missing from the distribution: " + missing, missing.isEmpty());

        List<String> failures = new ArrayList<>();
        for (String name : names) {
            Set<Long> before = bundleIds();
            try {
                installAndAssertFeature(name);
            } catch (AssertionError e) {
                failures.add(e.getMessage());
            }
            if (featuresService.isInstalled(featuresService.getFeature(name))) {
                featuresService.uninstallFeature(name);
            }
            Set<Long> left = bundleIds();
            left.removeAll(before);
            if (!left.isEmpty()) {
                failures.add("uninstalling " + name + " left bundles " + symbolicNames(left));
            }
        }
        if (!failures.isEmpty()) {
            fail(failures.size() + " of " + names.size() + " features are broken:\n" + String.join("\n", failures));
        }
    }

    private List<String> rnbdFeatures() throws Exception {
        List<String> names = new ArrayList<>();
        for (Feature feature : featuresService.listFeatures()) {
            if (feature.getName().startsWith("rnbd-")) {
                names.add(feature.getName());
            }
        }
        names.sort(null);
        return names;
    }

    private List<String> symbolicNames(Set<Long> ids) {
        List<String> names = new ArrayList<>();
        for (long id : ids) {
            names.add(bundleContext.getBundle(id).getSymbolicName());
        }
        return names;
    }
}

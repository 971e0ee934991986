package io.rnbd.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.apache.karaf.features.Feature;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;

/**
 * Every rnbd feature, alone, in a container that booted without the appliance: it resolves
 * offline, its bundles start, its components are satisfied, and uninstalling it takes its
 * bundles away again so the next feature meets a clean container.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class FeaturesIT extends KarafTestSupport {

    @Configuration
    public Option[] config() {
        return new Option[] {cleanDistribution()};
    }

    @Test
    public void everyFeatureInstallsAloneIntoACleanContainer() throws Exception {
        assertFalse("the clean container booted the appliance",
                featuresService.isInstalled(featuresService.getFeature("rnbd-appliance")));
        List<String> names = rnbdFeatures();
        assertTrue("rnbd features missing from the distribution: " + names, names.size() >= 17);
        for (String name : names) {
            List<Bundle> added = installAndAssertFeature(name);
            featuresService.uninstallFeature(name);
            for (Bundle bundle : added) {
                assertEquals("after uninstalling " + name + ", bundle " + bundle.getSymbolicName(),
                        Bundle.UNINSTALLED, bundle.getState());
            }
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
}

package io.rnbd.itests.instance;

import java.util.concurrent.TimeUnit;
import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;
import org.osgi.framework.InvalidSyntaxException;

/**
 * The activator of a bundle that {@link ApplianceInstanceIT} puts in a fresh instance's
 * startup.properties at start level 14, just below the features service's 15. It keeps
 * Felix's start-level thread until what the features service waits for at its start
 * (ConfigurationAdmin and the mvn: URL handler) is registered, so that the features service
 * finds both at once and installs the boot features on the start-level thread itself, holding
 * its own bundle's lock the whole time. That is the side of a race the first boot of issue 34
 * lost on a busy machine (2 boots in 3): any stop of the features bundle during that boot then
 * waits for ever. With the manifest header {@code X-Rnbd-Hold: forever} it keeps the thread for
 * good instead: a boot that makes no progress at all. Only the system bundle's package is
 * imported (services are looked up by name), so the bundle resolves before anything else is
 * there.
 */
public class StartLevelHold implements BundleActivator {
    private static final long MAX_HOLD_SECONDS = 60;

    /** The manifest header that says how long to hold: {@code prerequisites} or {@code forever}. */
    static final String HOLD_HEADER = "X-Rnbd-Hold";

    @Override
    public void start(BundleContext context) throws Exception {
        if ("forever".equals(context.getBundle().getHeaders().get(HOLD_HEADER))) {
            Thread.sleep(Long.MAX_VALUE);
        }
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(MAX_HOLD_SECONDS);
        while (System.nanoTime() < end
                && !(registered(context, "org.osgi.service.cm.ConfigurationAdmin", null)
                        && registered(context, "org.osgi.service.url.URLStreamHandlerService", "(url.handler.protocol=mvn)"))) {
            Thread.sleep(50);
        }
    }

    @Override
    public void stop(BundleContext context) {
    }

    private static boolean registered(BundleContext context, String name, String filter) throws InvalidSyntaxException {
        return context.getAllServiceReferences(name, filter) != null;
    }
}

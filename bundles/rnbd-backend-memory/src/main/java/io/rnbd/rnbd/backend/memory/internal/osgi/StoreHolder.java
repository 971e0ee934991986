package io.rnbd.rnbd.backend.memory.internal.osgi;

import java.util.Arrays;
import java.util.Comparator;
import java.util.Hashtable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.osgi.annotation.bundle.Capability;
import org.osgi.annotation.bundle.Requirement;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;

/**
 * Where the memory exports' stores are kept: a {@link ConcurrentMap} registered as a service by
 * the <em>system bundle</em>, so that it outlives this bundle. A service registered by this
 * bundle would go with its stop, a static with its class loader at {@code bundle:update}; the
 * framework's own registrations stay until the framework stops, which is when a RAM disk's
 * memory goes anyway. Its contents are JDK objects only (see MemoryStore), so the map pins no
 * class loader of this bundle and any version of it reads what an earlier one left.
 *
 * <p>What it costs: the map (and every store still in it) stays when the bundle is uninstalled,
 * as a file export's file stays when the file backend is; a store is freed when its export is
 * removed (rnbd-server calls {@code release}, at once or, with no memory backend running, when
 * one comes back), or when the appliance stops.
 */
// Registered by hand on the system bundle's context (so DS cannot) and looked up by hand: both
// declared, so that the manifest says what this bundle leaves behind and reads back.
@Capability(namespace = "osgi.service", attribute = {"objectClass:List<String>=java.util.concurrent.ConcurrentMap",
        StoreHolder.PROP + "=" + StoreHolder.VERSION})
@Requirement(namespace = "osgi.service", filter = "(&(objectClass=java.util.concurrent.ConcurrentMap)"
        + "(" + StoreHolder.PROP + "=" + StoreHolder.VERSION + "))", effective = "active",
        resolution = Requirement.Resolution.OPTIONAL)
final class StoreHolder {
    /** The holder's service property, with {@link #VERSION} as value. */
    static final String PROP = "rnbd.backend.memory.stores";
    static final String VERSION = "1";
    private static final String FILTER = "(" + PROP + "=" + VERSION + ")";

    private StoreHolder() {
    }

    /** The framework's holder, registered now if this is the first memory backend since the framework started. */
    @SuppressWarnings("unchecked")
    static ConcurrentMap<String, Object> stores(BundleContext context) {
        ServiceReference<?> held = find(context);
        if (held == null) {
            BundleContext framework = context.getBundle(Constants.SYSTEM_BUNDLE_LOCATION).getBundleContext();
            Hashtable<String, Object> props = new Hashtable<>();
            props.put(PROP, VERSION);
            props.put(Constants.SERVICE_DESCRIPTION, "memory exports' stores (rnbd-backend-memory), kept by the "
                    + "framework so that they outlive the backend's bundle");
            framework.registerService(ConcurrentMap.class.getName(), new ConcurrentHashMap<String, Object>(), props);
            // two memory backends racing here each registered one: both take the oldest
            held = find(context);
        }
        return (ConcurrentMap<String, Object>) context.getService(held);
    }

    private static ServiceReference<?> find(BundleContext context) {
        try {
            ServiceReference<?>[] refs = context.getServiceReferences(ConcurrentMap.class.getName(), FILTER);
            return refs == null ? null : Arrays.stream(refs)
                    .min(Comparator.comparingLong(r -> (Long) r.getProperty(Constants.SERVICE_ID))).orElseThrow();
        } catch (InvalidSyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}

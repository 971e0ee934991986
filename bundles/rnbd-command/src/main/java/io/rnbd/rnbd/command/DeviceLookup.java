package io.rnbd.rnbd.command;

import io.rnbd.rnbd.api.RemoteBlockDevice;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.TreeSet;
import org.osgi.framework.BundleContext;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;

/** Finds mapped devices, the {@link RemoteBlockDevice} services, by their {@code rnbd.device} name. */
public final class DeviceLookup {
    private DeviceLookup() {
    }

    /** A device service got for the duration of a command; closing ungets it. */
    record Held(BundleContext ctx, ServiceReference<RemoteBlockDevice> ref, RemoteBlockDevice device)
            implements AutoCloseable {
        @Override
        public void close() {
            ctx.ungetService(ref);
        }
    }

    static Held hold(BundleContext ctx, String name) {
        List<ServiceReference<RemoteBlockDevice>> refs = new ArrayList<>(references(ctx,
                "(" + RemoteBlockDevice.PROP_NAME + "=" + escape(name) + ")"));
        if (refs.isEmpty()) {
            throw new IllegalArgumentException("no mapped device '" + name + "'" + known(ctx));
        }
        refs.sort(null);
        ServiceReference<RemoteBlockDevice> ref = refs.get(refs.size() - 1);
        RemoteBlockDevice dev = ctx.getService(ref);
        if (dev == null) {
            throw new IllegalStateException("device '" + name + "' went away");
        }
        return new Held(ctx, ref, dev);
    }

    /** Names of the mapped devices, sorted. */
    public static TreeSet<String> names(BundleContext ctx) {
        TreeSet<String> names = new TreeSet<>();
        for (ServiceReference<RemoteBlockDevice> ref : references(ctx, null)) {
            Object n = ref.getProperty(RemoteBlockDevice.PROP_NAME);
            if (n != null) {
                names.add(n.toString());
            }
        }
        return names;
    }

    private static String known(BundleContext ctx) {
        TreeSet<String> names = names(ctx);
        return names.isEmpty() ? " (no device is mapped)" : " (mapped: " + String.join(", ", names) + ")";
    }

    private static Collection<ServiceReference<RemoteBlockDevice>> references(BundleContext ctx, String filter) {
        try {
            return ctx.getServiceReferences(RemoteBlockDevice.class, filter);
        } catch (InvalidSyntaxException e) {
            throw new IllegalArgumentException("bad device name in filter " + filter);
        }
    }

    static String escape(String value) {
        StringBuilder sb = new StringBuilder();
        for (char c : value.toCharArray()) {
            if (c == '\\' || c == '*' || c == '(' || c == ')') {
                sb.append('\\');
            }
            sb.append(c);
        }
        return sb.toString();
    }
}

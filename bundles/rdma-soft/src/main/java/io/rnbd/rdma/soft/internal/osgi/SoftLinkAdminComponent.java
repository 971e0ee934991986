package io.rnbd.rdma.soft.internal.osgi;

import io.rnbd.common.Errno;
import io.rnbd.common.Settle;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RdmaLinkAdmin;
import io.rnbd.rdma.soft.internal.SoftDevice;

import org.osgi.annotation.bundle.Requirement;
import org.osgi.framework.BundleContext;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * {@code rdma link add/delete} for soft devices: one named factory configuration of
 * {@link SoftDeviceComponent#PID} per link, so links survive restarts like any other
 * configuration.
 *
 * <p>Both return once the change has settled: ConfigAdmin delivers a configuration on its own
 * thread, so without the wait "Deleted soft link x" was printed while device x still carried
 * paths (and a caller counting what the removal failed over counted before it happened).
 * After {@code deleteLink} the device is unregistered, which means every IB client's
 * {@code remove} has returned; after {@code addLink} it is registered, so every IB client has
 * had its {@code add}.
 */
// Looks its own devices up outside DS, to wait until a link it added is registered: declared
// so that the manifest says so (docs/architecture.md, the service table).
@Requirement(namespace = "osgi.service", filter = "(&(objectClass=io.rnbd.rdma.api.RdmaDevice)(rdma.provider=soft))",
        effective = "active", resolution = Requirement.Resolution.OPTIONAL)
@Component(service = RdmaLinkAdmin.class, property = RdmaDevice.PROP_PROVIDER + "=" + SoftDevice.PROVIDER)
public final class SoftLinkAdminComponent implements RdmaLinkAdmin {
    /** How long add/delete wait for the device to come or go before saying it has not. */
    static final long SETTLE_MS = 10_000;
    private static final long POLL_MS = 10;

    private final ConfigurationAdmin configAdmin;
    private final Predicate<String> registered;
    private final Settle settle;

    @Activate
    public SoftLinkAdminComponent(@Reference ConfigurationAdmin configAdmin, BundleContext context) {
        this(configAdmin, name -> isRegistered(context, name), System::nanoTime, Thread::sleep);
    }

    SoftLinkAdminComponent(ConfigurationAdmin configAdmin, Predicate<String> registered, LongSupplier nanoClock,
            Settle.Sleeper sleeper) {
        this.configAdmin = configAdmin;
        this.registered = registered;
        this.settle = new Settle(nanoClock, sleeper, POLL_MS);
    }

    private static boolean isRegistered(BundleContext context, String name) {
        try {
            // name passed checkName: no filter metacharacters
            return !context.getServiceReferences(RdmaDevice.class, "(&(" + RdmaDevice.PROP_PROVIDER + "="
                    + SoftDevice.PROVIDER + ")(" + RdmaDevice.PROP_NAME + "=" + name + "))").isEmpty();
        } catch (InvalidSyntaxException e) {
            throw new IllegalArgumentException(e);
        } catch (IllegalStateException bundleStopping) {
            return false;
        }
    }

    /** Waits until the device named is registered ({@code up}) or not; ETIMEDOUT after {@link #SETTLE_MS}. */
    private void settle(String name, boolean up) throws RdmaException {
        boolean now;
        try {
            now = settle.until(() -> registered.test(name), r -> r == up, SETTLE_MS);
        } catch (InterruptedException e) {
            throw new RdmaException(Errno.EINTR, "interrupted waiting for link " + name);
        }
        if (now != up) {
            throw new RdmaException(Errno.ETIMEDOUT, up
                    ? "link " + name + " not added: its device did not come up within " + SETTLE_MS / 1000
                            + " s (see the log: address in use?)"
                    : "link " + name + " is deleted but its device was still registered after " + SETTLE_MS / 1000
                            + " s (see the log)");
        }
    }

    @Override
    public String provider() {
        return SoftDevice.PROVIDER;
    }

    @Override
    public synchronized void addLink(String name, String address) throws RdmaException {
        SoftDevice.checkName(name);
        SoftDevice.checkAddress(SoftDevice.parseAddress(address));
        if (!find(name).isEmpty()) {
            throw new RdmaException(Errno.EEXIST, "link " + name + " already exists");
        }
        Dictionary<String, Object> props = new Hashtable<>();
        props.put("name", name);
        props.put("address", address.trim());
        try {
            Configuration c = configAdmin.getFactoryConfiguration(SoftDeviceComponent.PID, name, "?");
            c.update(props);
        } catch (IOException e) {
            throw new RdmaException(Errno.EIO, "cannot store configuration of link " + name, e);
        }
        try {
            settle(name, true);
        } catch (RdmaException notUp) {
            // not half-added: a configuration whose device cannot start would fail at every boot
            try {
                for (Configuration c : find(name)) {
                    c.delete();
                }
            } catch (IOException e) {
                notUp.addSuppressed(e);
            }
            throw notUp;
        }
    }

    @Override
    public synchronized void deleteLink(String name) throws RdmaException {
        SoftDevice.checkName(name);
        List<Configuration> configs = find(name);
        if (configs.isEmpty()) {
            throw new RdmaException(Errno.ENOENT, "no link named " + name);
        }
        for (Configuration c : configs) {
            try {
                c.delete();
            } catch (IOException e) {
                throw new RdmaException(Errno.EIO, "cannot delete configuration of link " + name, e);
            }
        }
        settle(name, false);
    }

    @Override
    public List<String> links() throws RdmaException {
        List<String> names = new ArrayList<>();
        for (Configuration c : list("(service.factoryPid=" + SoftDeviceComponent.PID + ")")) {
            Object n = c.getProperties() == null ? null : c.getProperties().get("name");
            if (n != null) {
                names.add(n.toString());
            }
        }
        names.sort(null);
        return names;
    }

    private List<Configuration> find(String name) throws RdmaException {
        // name passed checkName: no filter metacharacters
        return list("(&(service.factoryPid=" + SoftDeviceComponent.PID + ")(name=" + name + "))");
    }

    private List<Configuration> list(String filter) throws RdmaException {
        try {
            Configuration[] found = configAdmin.listConfigurations(filter);
            return found == null ? List.of() : List.of(found);
        } catch (IOException | InvalidSyntaxException e) {
            throw new RdmaException(Errno.EIO, "cannot read configurations", e);
        }
    }
}

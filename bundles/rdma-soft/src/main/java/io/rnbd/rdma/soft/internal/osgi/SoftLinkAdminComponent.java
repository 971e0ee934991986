package io.rnbd.rdma.soft.internal.osgi;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RdmaLinkAdmin;
import io.rnbd.rdma.soft.internal.SoftDevice;

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

/**
 * {@code rdma link add/delete} for soft devices: one named factory configuration of
 * {@link SoftDeviceComponent#PID} per link, so links survive restarts like any other
 * configuration.
 */
@Component(service = RdmaLinkAdmin.class, property = RdmaDevice.PROP_PROVIDER + "=" + SoftDevice.PROVIDER)
public final class SoftLinkAdminComponent implements RdmaLinkAdmin {
    private final ConfigurationAdmin configAdmin;

    @Activate
    public SoftLinkAdminComponent(@Reference ConfigurationAdmin configAdmin) {
        this.configAdmin = configAdmin;
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

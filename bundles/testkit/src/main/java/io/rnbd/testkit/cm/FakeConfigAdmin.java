package io.rnbd.testkit.cm;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Dictionary;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.osgi.framework.Filter;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * ConfigAdmin in memory, for the tests of what keeps its state in configurations: factory and singleton
 * configurations, filter search (the framework's own filter syntax), and hooks standing in for the
 * components that react to updates and deletes.
 */
public final class FakeConfigAdmin implements ConfigurationAdmin {
    public final List<Conf> configs = new ArrayList<>();
    public Consumer<Conf> onUpdate = c -> {
    };
    public Consumer<Conf> onDelete = c -> {
    };
    private int next;

    public final class Conf implements Configuration {
        public final String pid;
        public final String factoryPid;
        public final String location;
        public Hashtable<String, Object> props;
        public boolean deleted;

        Conf(String pid, String factoryPid, String location) {
            this.pid = pid;
            this.factoryPid = factoryPid;
            this.location = location;
        }

        public Object get(String key) {
            return props == null ? null : props.get(key);
        }

        @Override
        public String getPid() {
            return pid;
        }

        @Override
        public Dictionary<String, Object> getProperties() {
            return props == null ? null : new Hashtable<>(props);
        }

        @Override
        public Dictionary<String, Object> getProcessedProperties(ServiceReference<?> reference) {
            return getProperties();
        }

        @Override
        public void update(Dictionary<String, ?> properties) {
            Hashtable<String, Object> p = new Hashtable<>();
            for (String k : Collections.list(properties.keys())) {
                p.put(k, properties.get(k));
            }
            p.put("service.pid", pid);
            if (factoryPid != null) {
                p.put("service.factoryPid", factoryPid);
            }
            props = p;
            onUpdate.accept(this);
        }

        @Override
        public void delete() {
            deleted = true;
            configs.remove(this);
            onDelete.accept(this);
        }

        @Override
        public String getFactoryPid() {
            return factoryPid;
        }

        @Override
        public void update() {
        }

        @Override
        public boolean updateIfDifferent(Dictionary<String, ?> properties) {
            update(properties);
            return true;
        }

        @Override
        public void setBundleLocation(String location) {
            throw new UnsupportedOperationException();
        }

        @Override
        public String getBundleLocation() {
            return location;
        }

        @Override
        public long getChangeCount() {
            return 0;
        }

        @Override
        public void addAttributes(ConfigurationAttribute... attrs) {
        }

        @Override
        public Set<ConfigurationAttribute> getAttributes() {
            return EnumSet.noneOf(ConfigurationAttribute.class);
        }

        @Override
        public void removeAttributes(ConfigurationAttribute... attrs) {
        }
    }

    /** A configuration as Karaf's fileinstall would have made it from etc/*.cfg. */
    public Conf existing(String factoryPid, Map<String, Object> props) {
        Conf c = new Conf(factoryPid + ".fileinstall" + next++, factoryPid, null);
        configs.add(c);
        c.update(new Hashtable<>(props));
        return c;
    }

    public List<Conf> of(String factoryPid) {
        return configs.stream().filter(c -> factoryPid.equals(c.factoryPid)).toList();
    }

    @Override
    public Configuration createFactoryConfiguration(String factoryPid) {
        return createFactoryConfiguration(factoryPid, null);
    }

    @Override
    public Configuration createFactoryConfiguration(String factoryPid, String location) {
        Conf c = new Conf(factoryPid + "." + next++, factoryPid, location);
        configs.add(c);
        return c;
    }

    /** A singleton configuration: the one of {@code pid}, else a new one without properties until its update. */
    @Override
    public Configuration getConfiguration(String pid, String location) {
        for (Conf c : configs) {
            if (c.factoryPid == null && c.pid.equals(pid)) {
                return c;
            }
        }
        Conf c = new Conf(pid, null, location);
        configs.add(c);
        return c;
    }

    @Override
    public Configuration getConfiguration(String pid) {
        return getConfiguration(pid, null);
    }

    /** The singleton configuration of {@code pid}, if one was made. */
    public Conf singleton(String pid) {
        return configs.stream().filter(c -> c.factoryPid == null && c.pid.equals(pid)).findFirst().orElse(null);
    }

    @Override
    public Configuration getFactoryConfiguration(String factoryPid, String name, String location) {
        throw new UnsupportedOperationException("commands create configurations with generated pids");
    }

    @Override
    public Configuration getFactoryConfiguration(String factoryPid, String name) {
        throw new UnsupportedOperationException("commands create configurations with generated pids");
    }

    @Override
    public Configuration[] listConfigurations(String filter) throws InvalidSyntaxException {
        Filter f = FrameworkUtil.createFilter(filter);
        Configuration[] found = configs.stream().filter(c -> c.props != null)
                .filter(c -> f.matches(new HashMap<>(c.props))).toArray(Configuration[]::new);
        // as the specification says: null, not an empty array
        return found.length == 0 ? null : found;
    }
}

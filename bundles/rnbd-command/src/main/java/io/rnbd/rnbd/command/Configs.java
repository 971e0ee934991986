package io.rnbd.rnbd.command;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * The factory configurations behind exports and mappings. They are created with location
 * "?" so whichever bundle (rnbd-server, rnbd-client) owns the PID binds them, and found by
 * their name property, so configurations from etc/*.cfg count as well.
 */
final class Configs {
    static final String EXPORT_PID = "io.rnbd.server.export";
    static final String MAP_PID = "io.rnbd.client.map";
    static final String ANY_LOCATION = "?";

    private Configs() {
    }

    static ConfigurationAdmin require(ConfigurationAdmin ca) {
        if (ca == null) {
            throw new IllegalStateException("ConfigAdmin is not running");
        }
        return ca;
    }

    /** Configurations of {@code factoryPid} whose {@code key} is {@code value}. */
    static List<Configuration> find(ConfigurationAdmin ca, String factoryPid, String key, String value)
            throws IOException {
        return list(ca, "(&(service.factoryPid=" + factoryPid + ")(" + key + "=" + escape(value) + "))");
    }

    static List<Configuration> all(ConfigurationAdmin ca, String factoryPid) throws IOException {
        return list(ca, "(service.factoryPid=" + factoryPid + ")");
    }

    private static List<Configuration> list(ConfigurationAdmin ca, String filter) throws IOException {
        try {
            Configuration[] found = require(ca).listConfigurations(filter);
            return found == null ? List.of() : Arrays.asList(found);
        } catch (InvalidSyntaxException e) {
            throw new IllegalArgumentException("cannot search configurations with " + filter);
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

    static String string(Configuration c, String key) {
        Object v = c.getProperties() == null ? null : c.getProperties().get(key);
        return v == null ? "" : v.toString();
    }

    /** Device and session names: they become service properties, file names and table cells. */
    static String requireName(String what, String name) {
        if (name == null || !name.matches("[A-Za-z0-9._:@-]{1,254}")) {
            throw new IllegalArgumentException(what + " '" + name + "' is not a valid name "
                    + "(letters, digits and . _ : @ -, at most 254)");
        }
        return name;
    }

    /** Export names may be paths, as the kernel's device_path (e.g. /dev/ram0, pool/vol1). */
    static String requireExportName(String what, String name) {
        if (name == null || !name.matches("[A-Za-z0-9._:@/-]{1,254}")) {
            throw new IllegalArgumentException(what + " '" + name + "' is not a valid name "
                    + "(letters, digits and . _ : @ / -, at most 254)");
        }
        return name;
    }
}

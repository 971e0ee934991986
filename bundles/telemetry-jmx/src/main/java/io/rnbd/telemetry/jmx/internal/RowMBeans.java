package io.rnbd.telemetry.jmx.internal;

import io.rnbd.telemetry.api.Column;
import io.rnbd.telemetry.api.Table;
import io.rnbd.telemetry.api.TableSchema;
import io.rnbd.telemetry.api.Telemetry;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one {@link RowMBean} registered per telemetry row: {@link #sync()} registers the rows
 * that appeared (a path added, a device mapped) and unregisters those that went, and
 * {@link #close()} unregisters every one. Names: {@code io.rnbd:type=<table>,<id>=<value>...},
 * e.g. {@code io.rnbd:type=rtrs-client-path,session=appliance,path=127.0.0.1@127.0.0.1}.
 */
public final class RowMBeans implements AutoCloseable {
    public static final String DOMAIN = "io.rnbd";
    private static final Logger LOG = LoggerFactory.getLogger(RowMBeans.class);

    private final MBeanServer server;
    private final Telemetry telemetry;
    private final Map<ObjectName, RowMBean> registered = new HashMap<>();
    private boolean closed;

    public RowMBeans(MBeanServer server, Telemetry telemetry) {
        this.server = server;
        this.telemetry = telemetry;
    }

    /** The MBean name of a row with identity {@code id} in {@code schema}. */
    public static ObjectName name(TableSchema schema, List<String> id) {
        StringBuilder sb = new StringBuilder(DOMAIN).append(":type=").append(schema.jmxType());
        List<Column> ids = schema.ids();
        for (int i = 0; i < ids.size(); i++) {
            sb.append(',').append(ids.get(i).key()).append('=').append(quoted(id.get(i)));
        }
        try {
            return new ObjectName(sb.toString());
        } catch (MalformedObjectNameException e) {
            throw new IllegalArgumentException("no MBean name for " + id + ": " + e.getMessage(), e);
        }
    }

    /** Values are quoted only when they must be (a path with a port has a colon). */
    private static String quoted(String value) {
        return value.isEmpty() || value.chars().anyMatch(ch -> ",=:\"*?\n\\".indexOf(ch) >= 0)
                ? ObjectName.quote(value) : value;
    }

    /** Registers the rows that are new, unregisters those gone; returns how many are registered. */
    public synchronized int sync() {
        if (closed) {
            return 0;
        }
        Map<ObjectName, RowMBean> wanted = new LinkedHashMap<>();
        for (Table t : telemetry.tables()) {
            for (List<Object> row : t.rows()) {
                List<String> id = t.id(row);
                ObjectName name = name(t.schema(), id);
                wanted.put(name, registered.containsKey(name) ? registered.get(name)
                        : new RowMBean(telemetry, t.schema(), id));
            }
        }
        for (ObjectName gone : List.copyOf(registered.keySet())) {
            if (!wanted.containsKey(gone)) {
                unregister(gone);
            }
        }
        for (Map.Entry<ObjectName, RowMBean> e : wanted.entrySet()) {
            if (!registered.containsKey(e.getKey())) {
                try {
                    server.registerMBean(e.getValue(), e.getKey());
                    registered.put(e.getKey(), e.getValue());
                } catch (InstanceAlreadyExistsException ex) {
                    LOG.warn("JMX: {} is registered by someone else, left alone", e.getKey());
                } catch (JMException ex) {
                    LOG.warn("JMX: cannot register {}: {}", e.getKey(), ex.toString());
                }
            }
        }
        return registered.size();
    }

    private void unregister(ObjectName name) {
        registered.remove(name);
        try {
            server.unregisterMBean(name);
        } catch (InstanceNotFoundException e) {
            // someone unregistered it already: nothing left to do
        } catch (JMException e) {
            LOG.warn("JMX: cannot unregister {}: {}", name, e.toString());
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        for (ObjectName name : List.copyOf(registered.keySet())) {
            unregister(name);
        }
    }
}

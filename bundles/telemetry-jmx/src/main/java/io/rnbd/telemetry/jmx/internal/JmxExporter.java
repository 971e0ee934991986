package io.rnbd.telemetry.jmx.internal;

import io.rnbd.telemetry.api.Telemetry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything this bundle puts into an MBeanServer: the three subsystem MBeans with the
 * operations, and the row MBeans kept in step with the rows by a refresh every
 * {@code refreshMillis} on one daemon thread. {@link #close()} takes all of it away again,
 * thread included.
 */
public final class JmxExporter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(JmxExporter.class);
    public static final String THREAD_NAME = "rnbd-telemetry-jmx";

    private final MBeanServer server;
    private final RowMBeans rows;
    private final List<ObjectName> subsystems = new ArrayList<>();
    private final ScheduledExecutorService refresher;

    public JmxExporter(MBeanServer server, Telemetry telemetry, Operations.Factory operations, long refreshMillis)
            throws JMException {
        if (refreshMillis < 100) {
            throw new IllegalArgumentException("refresh.ms must be at least 100, not " + refreshMillis);
        }
        this.server = server;
        this.rows = new RowMBeans(server, telemetry);
        Operations ops = operations.create(this::refresh);
        // SCR never deactivates a component whose constructor threw: what this one registered
        // before it failed is unregistered here, or the next activation finds the names taken
        try {
            register(new NamedStandardMBean<>(ops.rtrsClient(), RtrsClientMBean.class), "rtrs-client");
            register(new NamedStandardMBean<>(ops.rnbdClient(), RnbdClientMBean.class), "rnbd-client");
            register(new NamedStandardMBean<>(ops.rnbdServer(), RnbdServerMBean.class), "rnbd-server");
            rows.sync();
        } catch (JMException | RuntimeException e) {
            close();
            throw e;
        }
        refresher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, THREAD_NAME);
            t.setDaemon(true);
            return t;
        });
        refresher.scheduleWithFixedDelay(this::refresh, refreshMillis, refreshMillis, TimeUnit.MILLISECONDS);
    }

    /**
     * A subsystem's MBean under its name. One already there is taken over: only this component
     * registers these names, so it is an earlier instance's that was never closed (seen once, in
     * FeaturesIT's install/uninstall of every feature in one container, 2026-12-01; the log did
     * not say how it escaped: a constructor that failed in rows.sync() left its names, mended
     * above, and this covers what else may), and leaving it would fail this activation for good.
     */
    private void register(Object mbean, String type) throws JMException {
        ObjectName name = new ObjectName(RowMBeans.DOMAIN + ":type=" + type);
        try {
            server.registerMBean(mbean, name);
        } catch (InstanceAlreadyExistsException stale) {
            LOG.warn("JMX: {} was left registered by an earlier instance; replaced", name);
            try {
                server.unregisterMBean(name);
            } catch (InstanceNotFoundException gone) {
                // unregistered meanwhile: the name is free
            }
            server.registerMBean(mbean, name);
        }
        subsystems.add(name);
    }

    /** Registers and unregisters row MBeans as rows came and went. */
    public void refresh() {
        try {
            rows.sync();
        } catch (RuntimeException e) {
            LOG.warn("JMX: refreshing the MBeans failed: {}", e.toString());
        }
    }

    @Override
    public void close() {
        if (refresher != null) {
            refresher.shutdownNow();
            try {
                if (!refresher.awaitTermination(5, TimeUnit.SECONDS)) {
                    LOG.warn("JMX: {} did not end within 5 s", THREAD_NAME);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        rows.close();
        for (ObjectName name : subsystems) {
            try {
                server.unregisterMBean(name);
            } catch (JMException e) {
                LOG.warn("JMX: cannot unregister {}: {}", name, e.toString());
            }
        }
        subsystems.clear();
    }
}

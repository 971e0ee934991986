package io.rnbd.telemetry.jmx.internal.osgi;

import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.telemetry.api.Telemetry;
import io.rnbd.telemetry.jmx.internal.JmxExporter;
import io.rnbd.telemetry.jmx.internal.Operations;
import javax.management.JMException;
import javax.management.MBeanServer;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Puts the appliance into Karaf's MBeanServer (the management feature): an MBean per
 * telemetry row and the subsystem MBeans with the console's safe operations. Everything goes
 * when the component does.
 */
@Component(service = {}, immediate = true, configurationPid = JmxComponent.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = JmxComponent.Config.class)
public final class JmxComponent {
    static final String PID = "io.rnbd.telemetry.jmx";

    @ObjectClassDefinition(id = PID, name = "RNBD JMX",
            description = "MBeans under io.rnbd:type=... for RDMA devices, RTRS sessions and paths, exports, "
                    + "mapped devices and the NBD gateway")
    public @interface Config {
        @AttributeDefinition(name = "Refresh interval (ms)",
                description = "How often MBeans are added and removed as sessions, paths, exports and devices come "
                        + "and go (at least 100); attribute values are always read when asked")
        long refresh_ms() default 1000;
    }

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile RtrsClientAdmin rtrsClient;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile RtrsServerAdmin rtrsServer;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile RnbdClientAdmin rnbdClient;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile RnbdServerAdmin rnbdServer;

    private final JmxExporter exporter;

    @Activate
    public JmxComponent(@Reference MBeanServer server, @Reference Telemetry telemetry, Config config)
            throws JMException {
        exporter = new JmxExporter(server, telemetry, changed -> new Operations(() -> rtrsClient, () -> rtrsServer,
                () -> rnbdClient, () -> rnbdServer, changed), config.refresh_ms());
    }

    @Deactivate
    void deactivate() {
        exporter.close();
    }
}

package io.rnbd.telemetry.dashboard.internal.osgi;

import io.rnbd.telemetry.api.Telemetry;
import io.rnbd.telemetry.dashboard.internal.DashboardServlet;
import io.rnbd.telemetry.dashboard.internal.JaasLogin;
import java.util.Dictionary;
import java.util.Hashtable;
import javax.servlet.Servlet;
import org.osgi.annotation.bundle.Capability;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Registers the dashboard servlet with Karaf's HTTP whiteboard (Pax Web) under
 * {@code path}, and takes it away on deactivation.
 */
// Registered by hand: its whiteboard pattern is made of the configured path ({path, path/*}),
// which DS cannot derive from a configuration property. Declared here, as DS would have.
@Capability(namespace = "osgi.service", attribute = "objectClass:List<String>=javax.servlet.Servlet", uses = Servlet.class)
@Component(service = {}, immediate = true, configurationPid = DashboardComponent.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = DashboardComponent.Config.class)
public final class DashboardComponent {
    static final String PID = "io.rnbd.telemetry.dashboard";

    @ObjectClassDefinition(id = PID, name = "RNBD dashboard",
            description = "A live web dashboard of sessions, paths, exports and mapped devices on Karaf's HTTP port "
                    + "(etc/org.ops4j.pax.web.cfg), behind a JAAS login")
    public @interface Config {
        @AttributeDefinition(name = "Path", description = "Where the dashboard is served, e.g. /rnbd")
        String path() default "/rnbd";

        @AttributeDefinition(name = "JAAS realm", description = "The realm users log in against (Karaf's is karaf)")
        String realm() default "karaf";

        @AttributeDefinition(name = "Role",
                description = "The role a user needs (viewer: every Karaf user of etc/users.properties' admingroup); "
                        + "empty = any user the realm accepts")
        String role() default "viewer";

        @AttributeDefinition(name = "Session timeout (s)", description = "Idle time after which a login expires")
        int session_timeout_s() default 1800;
    }

    private final ServiceRegistration<Servlet> registration;

    @Activate
    public DashboardComponent(@Reference Telemetry telemetry, Config config, BundleContext context) {
        String path = config.path().strip();
        if (!path.matches("/[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*")) {
            throw new IllegalArgumentException("path must look like /rnbd, not '" + config.path() + "'");
        }
        if (config.session_timeout_s() < 60) {
            throw new IllegalArgumentException("session.timeout.s must be at least 60, not " + config.session_timeout_s());
        }
        DashboardServlet servlet = new DashboardServlet(telemetry::tables,
                new JaasLogin(config.realm(), config.role().strip()), config.session_timeout_s(),
                System::currentTimeMillis);
        Dictionary<String, Object> props = new Hashtable<>();
        props.put("osgi.http.whiteboard.servlet.pattern", new String[] {path, path + "/*"});
        props.put("osgi.http.whiteboard.servlet.name", "rnbd-dashboard");
        registration = context.registerService(Servlet.class, servlet, props);
    }

    @Deactivate
    void deactivate() {
        registration.unregister();
    }
}
